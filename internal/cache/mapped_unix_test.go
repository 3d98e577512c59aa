//go:build linux

package cache

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resident counts the pages of the mapped b the kernel holds in memory.
func resident(t *testing.T, b []byte) int {
	t.Helper()
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(&b[0]))
	first := start &^ (page - 1)
	size := start + uintptr(len(b)) - first
	vec := make([]byte, (size+page-1)/page)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, first, size, uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		t.Fatal(errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// dropPages writes p's pages out and asks the kernel to forget them.
func dropPages(t *testing.T, p string) {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
}

// TestMapReadsHeadAlone: Map of an entry unchanged since written reads its
// head and tail, not its data (the kernel holds few of its pages after);
// once the file's modification time changes, Map checks it whole, reading
// every page, and restores the time, and refuses it when a byte changed.
func TestMapReadsHeadAlone(t *testing.T) {
	c, _ := newCache(t)
	key := Key("big")
	// 64 MB: the kernel reads ahead of a page touched (up to 8 MB here).
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<22)
	c.PutParts("sections", 1, key, [][]byte{data})
	p := c.path("sections", key)
	dropPages(t, p)
	got, release, ok := c.Map("sections", 1, key)
	if !ok {
		t.Fatal("Map refused the entry it wrote")
	}
	pages := len(got) / os.Getpagesize()
	if n := resident(t, got); n > pages/2 {
		t.Errorf("Map of an unchanged entry: %d of %d pages read, want those around the head and tail alone", n, pages)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("Map gave other bytes than written")
	}
	release()

	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
	dropPages(t, p)
	got, release, ok = c.Map("sections", 1, key)
	if !ok {
		t.Fatal("Map refused an entry touched but not changed")
	}
	if n := resident(t, got); n < pages*9/10 {
		t.Errorf("Map of an entry touched since written: %d of %d pages read, want every one checked", n, pages)
	}
	release()
	// Found whole, it has its written time back: checked by its head again.
	dropPages(t, p)
	got, release, ok = c.Map("sections", 1, key)
	if n := resident(t, got); !ok || n > pages/2 {
		t.Errorf("Map after a whole check: %d of %d pages read (%v), want those around the head and tail alone", n, pages, ok)
	}
	release()

	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{'X'}, int64(len(data)/2)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, _, ok := c.Map("sections", 1, key); ok {
		t.Error("a byte of the data changed in place: Map trusted the entry")
	}
}

// TestCreate: an entry written in place, read through its mapping as
// written, reads back through Map and Get as
// PutParts's would, every byte checked by Get; one aborted leaves no file.
func TestCreate(t *testing.T) {
	c, logged := newCache(t)
	key := Key("in place")
	data := bytes.Repeat([]byte("debug_info\x00"), 300000)
	e, ok := c.Create("sections", 2, key, len(data))
	if !ok {
		t.Fatal("Create refused")
	}
	for off := 0; off < len(data); off += 100000 {
		if err := e.WriteAt(data[off:min(off+100000, len(data))], int64(off)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(e.Data[:min(off+100000, len(data))], data[:min(off+100000, len(data))]) {
			t.Fatalf("Data after writing %d bytes: not what was written", off)
		}
	}
	if err := e.WriteAt([]byte{1}, int64(len(data))); err == nil {
		t.Error("a write past the entry's end: no error")
	}
	e.Commit()
	if !bytes.Equal(e.Data, data) {
		t.Fatal("the data changed on Commit")
	}
	e.Release()
	got, release, ok := c.Map("sections", 2, key)
	if !ok || !bytes.Equal(got, data) {
		t.Fatalf("Map = %d bytes, %v; want the %d bytes filled", len(got), ok, len(data))
	}
	release()
	if got, ok := c.Get("sections", 2, key); !ok || !bytes.Equal(got, data) {
		t.Fatalf("Get = %d bytes, %v; want the %d bytes filled", len(got), ok, len(data))
	}
	if len(*logged) != 0 {
		t.Errorf("log: %q", *logged)
	}
	other := Key("aborted")
	e, ok = c.Create("sections", 2, other, 1<<20)
	if !ok {
		t.Fatal("Create refused")
	}
	e.Abort()
	e.Release()
	ents, _ := os.ReadDir(filepath.Dir(c.path("sections", other)))
	for _, d := range ents {
		if d.Name() != filepath.Base(c.path("sections", key)) {
			t.Errorf("%s left behind", d.Name())
		}
	}
}
