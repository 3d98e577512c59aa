package unwind

import (
	"encoding/binary"
	"reflect"
	"testing"
)

func TestDecodeKey(t *testing.T) {
	b := make([]byte, KeySize)
	binary.LittleEndian.PutUint32(b, 42)
	binary.LittleEndian.PutUint32(b[4:], uint32(0xffffffff))
	binary.LittleEndian.PutUint64(b[8:], 0x401000)
	binary.LittleEndian.PutUint64(b[16:], 0x402000)
	k, err := DecodeKey(b)
	if err != nil || k.Pid != 42 || k.Aux != -1 || !reflect.DeepEqual(k.IPs, []uint64{0x401000, 0x402000}) {
		t.Errorf("%+v %v", k, err)
	}
	if _, err := DecodeKey(b[1:]); err == nil {
		t.Error("a short key decodes")
	}
}
