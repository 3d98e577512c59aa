package leb128

import "testing"

// The examples of the DWARF 5 standard, section 7.6 (tables 7.7 and 7.8).
func TestStandardExamples(t *testing.T) {
	for _, c := range []struct {
		b []byte
		v uint64
	}{{[]byte{2}, 2}, {[]byte{127}, 127}, {[]byte{0x80, 1}, 128}, {[]byte{0x81, 1}, 129}, {[]byte{0x82, 1}, 130}, {[]byte{0xb9, 0x64}, 12857}} {
		if v, n := Uint(c.b); v != c.v || n != len(c.b) {
			t.Errorf("Uint(% x) = %d, %d; want %d, %d", c.b, v, n, c.v, len(c.b))
		}
	}
	for _, c := range []struct {
		b []byte
		v int64
	}{{[]byte{2}, 2}, {[]byte{0x7e}, -2}, {[]byte{0xff, 0}, 127}, {[]byte{0x81, 0x7f}, -127}, {[]byte{0x80, 1}, 128}, {[]byte{0x80, 0x7f}, -128}, {[]byte{0x81, 1}, 129}, {[]byte{0xff, 0x7e}, -129}} {
		if v, n := Int(c.b); v != c.v || n != len(c.b) {
			t.Errorf("Int(% x) = %d, %d; want %d, %d", c.b, v, n, c.v, len(c.b))
		}
	}
	if _, n := Uint([]byte{0x80, 0x80}); n != 0 {
		t.Errorf("truncated number: n = %d, want 0", n)
	}
}
