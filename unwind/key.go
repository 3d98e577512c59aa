package unwind

import (
	"encoding/binary"
	"errors"
)

// KeySize is the size of a counted stack's key:
//
//	u32 process, s32 aux (a profile's kernel stack id, a probe's index), u64 ips[Depth]
const KeySize = 8 + 8*Depth

// Key is a counted stack.
type Key struct {
	Pid uint32
	// Aux is the kernel stack's id in a profile (negative: none), the
	// probe's index in a probe session.
	Aux int32
	IPs []uint64 // innermost first, without the trailing zeros
}

// DecodeKey reads a key of the "stacks" map.
func DecodeKey(b []byte) (Key, error) {
	if len(b) != KeySize {
		return Key{}, errors.New("stack key of the wrong size")
	}
	k := Key{Pid: binary.LittleEndian.Uint32(b), Aux: int32(binary.LittleEndian.Uint32(b[4:]))}
	k.IPs = DecodeIPs(b[8:])
	return k, nil
}

// DecodeIPs reads Depth addresses up to the first zero.
func DecodeIPs(b []byte) []uint64 {
	var ips []uint64
	for i := 0; i < Depth && 8*i+8 <= len(b); i++ {
		ip := binary.LittleEndian.Uint64(b[8*i:])
		if ip == 0 {
			break
		}
		ips = append(ips, ip)
	}
	return ips
}

// Raw is a counted stack as the kernel holds it: the process, its user
// return addresses and its kernel addresses, innermost first.
type Raw struct {
	Pid    int
	User   []uint64
	Kernel []uint64
	Count  uint64
}
