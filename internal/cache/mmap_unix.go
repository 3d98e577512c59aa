//go:build unix

package cache

import (
	"bytes"
	"os"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapFile maps the file at p read-only, and gives its modification
// time; unmap releases it.
func mapFile(p string) (b []byte, mtime time.Time, unmap func(), err error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, mtime, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, mtime, nil, err
	}
	if st.Size() == 0 {
		return nil, st.ModTime(), func() {}, nil
	}
	b, err = unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, mtime, nil, err
	}
	return b, st.ModTime(), func() { unix.Munmap(b) }, nil
}

// Evict drops the pages of b, part of a mapping Map returned, from this
// process's memory (its resident set): they stay in the page cache, and
// a later read maps them again. Only the pages b covers whole are
// dropped.
func Evict(b []byte) {
	if len(b) == 0 {
		return
	}
	page := uintptr(os.Getpagesize())
	p := uintptr(unsafe.Pointer(&b[0]))
	lo := int((page - p%page) % page)
	hi := len(b) - int((p+uintptr(len(b)))%page)
	if hi > lo {
		unix.Madvise(b[lo:hi], unix.MADV_DONTNEED)
	}
}

// FileResident is how many bytes of file pages this process has resident
// (its mappings of files: the entries Map returned, its own executable),
// or -1 where the system does not say (Linux's /proc/self/statm does).
func FileResident() int {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return -1
	}
	// size resident shared ...: shared counts the pages backed by files.
	f := bytes.Fields(b)
	if len(f) < 3 {
		return -1
	}
	n, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return -1
	}
	return n * os.Getpagesize()
}
