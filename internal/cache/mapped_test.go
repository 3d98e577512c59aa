package cache

import (
	"bytes"
	"os"
	"testing"
)

// TestMapParts: what PutParts wrote, Map gives mapped, the parts one after
// another; a flipped byte anywhere in the data, a truncation or another
// version is not trusted.
func TestMapParts(t *testing.T) {
	c, _ := newCache(t)
	key := Key("sections")
	parts := [][]byte{bytes.Repeat([]byte("info"), 5000), {}, bytes.Repeat([]byte("str\x00"), 3000)}
	c.PutParts("sections", 1, key, parts)
	got, release, ok := c.Map("sections", 1, key)
	if !ok || !bytes.Equal(got, bytes.Join(parts, nil)) {
		t.Fatalf("Map = %d bytes, %v; want the %d bytes written", len(got), ok, len(bytes.Join(parts, nil)))
	}
	release()
	if _, _, ok := c.Map("sections", 2, key); ok {
		t.Error("Map of another format version trusted the entry")
	}
	p := c.path("sections", key)
	whole, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{len(whole) / 3, len(whole) / 2, len(whole) - 20} {
		bad := bytes.Clone(whole)
		bad[at] ^= 0x40
		if err := os.WriteFile(p, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, _, ok := c.Map("sections", 1, key); ok {
			t.Errorf("byte %d flipped: Map trusted the entry", at)
		}
	}
	if err := os.WriteFile(p, whole[:len(whole)-1], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := c.Map("sections", 1, key); ok {
		t.Error("a truncated entry was trusted")
	}
	if _, _, ok := (*Cache)(nil).Map("sections", 1, key); ok {
		t.Error("a nil cache found an entry")
	}
}
