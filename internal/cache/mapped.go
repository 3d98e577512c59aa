package cache

import (
	"errors"
	"io"
	"os"
)

// Map returns the data of the entry of this kind and key as Get does, but
// mapped into memory rather than read: an entry of hundreds of megabytes
// (the inflated copy of a file's DWARF) costs the pages a reader touches,
// and is never copied. Its head (version, key), length and the head's
// checksum are checked; the checksum of the whole, which would read every
// page, only when the file's modification time is not the one its head
// says it was written with (PutStream sets it before the entry is renamed
// into place): a file written to since, changed or replaced, is checked
// whole before it is used, and given that time back when found whole.
// release unmaps it; the data must not be used after.
//
// Kept for speed: `GOMAXPROCS=1 bash bench/before.sh main REV 21
// C-timex-warm C-runtime.g-warm` with the entry read whole in REV: 1.27
// (15 of 21) and 1.20 (17 of 21) times the CPU time; C-_typeobject-warm
// (a small entry) 0.95 (4 of 20).
func (c *Cache) Map(kind string, version uint32, key string) (data []byte, release func(), ok bool) {
	if c == nil {
		return nil, nil, false
	}
	p := c.path(kind, key)
	b, mtime, unmap, err := mapFile(p)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			c.logf("index cache: %s: %v; reading the binary", p, err)
		}
		return nil, nil, false
	}
	data, written, err := unframeHead(b, version, key)
	if err == nil && !mtime.Equal(written) {
		if data, err = unframe(b, version, key); err == nil {
			// Checked whole: the next Map need not (a file copied
			// or touched, not changed).
			os.Chtimes(p, written, written)
		}
	}
	if err != nil {
		unmap()
		c.logf("index cache: %s: %v; ignored, reading the binary", p, err)
		return nil, nil, false
	}
	return data, unmap, true
}

// PutParts writes the entry of this kind and key, the parts one after
// another, as Put does (an entry made of sections already in memory is not
// copied into one buffer first).
func (c *Cache) PutParts(kind string, version uint32, key string, parts [][]byte) {
	c.PutStream(kind, version, key, func(w io.Writer) error {
		for _, p := range parts {
			if _, err := w.Write(p); err != nil {
				return err
			}
		}
		return nil
	})
}
