//go:build linux

package cache

import (
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Pending is an entry being written in place: its data, mapped read-only
// from a temporary file, is written by the caller (WriteAt: an inflater
// writing each piece as it is made, where a written entry would copy
// hundreds of megabytes from the heap) and read through the mapping as
// written, then Commit puts it into place, as PutStream would have
// written it. The pages are written, not faulted in through the mapping:
// a page written through a mapping is first read (zeroed, here, with the
// pages the kernel reads ahead: 10 to 20% of a cold lookup's time on
// ceph-osd).
type Pending struct {
	// Data is the entry's data, mapped read-only, to write whole
	// (WriteAt) before Commit.
	Data    []byte
	c       *Cache
	p       string
	tmp     *os.File
	m       []byte
	head    int
	written time.Time
}

// Create starts the entry of this kind and key, of size bytes of data;
// false when the cache is off or the file cannot be made and mapped with
// its room reserved (a full disk, a file system without fallocate): the
// caller then keeps its data on the heap.
func (c *Cache) Create(kind string, version uint32, key string, size int) (*Pending, bool) {
	if c == nil {
		return nil, false
	}
	p := c.path(kind, key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, false
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return nil, false
	}
	written := time.Now().Truncate(time.Microsecond)
	head := frameHead(version, written, key)
	total := len(head) + size + tailLen
	// Room reserved first: a write through the mapping to a full disk
	// would kill the process (SIGBUS).
	if err := unix.Fallocate(int(tmp.Fd()), 0, 0, int64(total)); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, false
	}
	m, err := unix.Mmap(int(tmp.Fd()), 0, total, unix.PROT_READ, unix.MAP_SHARED)
	if err == nil {
		_, err = tmp.WriteAt(head, 0)
	}
	if err != nil {
		if m != nil {
			unix.Munmap(m)
		}
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, false
	}
	return &Pending{Data: m[len(head) : len(head)+size : len(head)+size], c: c, p: p, tmp: tmp, m: m,
		head: len(head), written: written}, true
}

// WriteAt writes b as the data at off, which Data then reads.
func (e *Pending) WriteAt(b []byte, off int64) error {
	if off < 0 || off+int64(len(b)) > int64(len(e.Data)) {
		return fmt.Errorf("index cache: %d bytes at %d past the entry's %d", len(b), off, len(e.Data))
	}
	_, err := e.tmp.WriteAt(b, int64(e.head)+off)
	return err
}

// Commit ends the entry with its length and checksums and renames it into
// place. The data stays mapped for the caller to go on reading (Release
// unmaps it).
func (e *Pending) Commit() {
	n := len(e.Data)
	sum := crc32.Checksum(e.m[:e.head+n], castagnoli())
	_, err := e.tmp.WriteAt(frameTail(e.m[:e.head], sum, uint64(n)), int64(e.head+n))
	if cerr := e.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chtimes(e.tmp.Name(), e.written, e.written)
	}
	if err == nil {
		err = os.Rename(e.tmp.Name(), e.p)
	}
	if err != nil {
		os.Remove(e.tmp.Name())
		e.c.logf("index cache: %v", err)
		return
	}
	e.c.prune(filepath.Dir(e.p))
}

// Abort drops the entry. The data stays mapped, and WriteAt writes it,
// for the caller to go on reading what it writes (Release unmaps it).
func (e *Pending) Abort() {
	os.Remove(e.tmp.Name())
}

// Release unmaps the data, after Commit or Abort; it must not be used
// after.
func (e *Pending) Release() {
	if e.m != nil {
		unix.Munmap(e.m)
		e.m = nil
	}
	e.tmp.Close()
}
