package attach

import (
	"github.com/binscope/binscope/stack"
	"github.com/binscope/binscope/unwind"
)

// RawStacks reads the counted stacks without naming them (for encoders
// that keep addresses, such as pprof's); Mappings(pid) places the user
// addresses. It reads what Stacks reads, and does not count it again in
// BytesRead.
func (p *Profile) RawStacks() ([]unwind.Raw, error) {
	var out []unwind.Raw
	key, kips := make([]byte, unwind.KeySize), make([]uint64, 127)
	var n uint64
	it := p.coll.Maps["stacks"].Iterate()
	for it.Next(&key, &n) {
		k, err := unwind.DecodeKey(key)
		if err != nil {
			return nil, err
		}
		r := unwind.Raw{Pid: int(k.Pid), User: k.IPs, Count: n}
		if k.Aux >= 0 && p.coll.Maps["kstacks"].Lookup(uint32(k.Aux), &kips) == nil {
			for _, ip := range kips {
				if ip == 0 {
					break
				}
				r.Kernel = append(r.Kernel, ip)
			}
		}
		out = append(out, r)
	}
	return out, it.Err()
}

// Mappings are process pid's executable mappings as the unwinder last read
// them (kept after the process exited).
func (u *unwinder) Mappings(pid int) []stack.Mapping {
	if u == nil {
		return nil
	}
	return u.mappings(pid)
}
