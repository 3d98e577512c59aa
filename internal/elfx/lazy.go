package elfx

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/binscope/binscope/internal/inflate"
)

// Lazy is a section's contents, read (and, for an SHF_COMPRESSED section,
// inflated) from its start only as far as asked: a lookup that finds what
// it wants in the first compile units of .debug_info leaves the rest of
// the section unread. A zlib-compressed section is inflated by
// internal/inflate straight into the section's buffer (about three times
// as fast as debug/elf's inflater), whole sections too.
type Lazy struct {
	mu   sync.Mutex
	buf  []byte // the bytes read so far
	size uint64 // the section's full (uncompressed) size
	// prealloc is the buffer's first size (see prealloc).
	prealloc uint64
	r        io.Reader // what is left to read, nil once done
	// z, for a zlib-compressed section, is r, which fill asks to
	// inflate straight into the buffer.
	z *inflate.Reader
	// through, when set, is where z inflates to: the buffer is
	// read-only, written by through.write (see InflateInto).
	through *through
	err     error
	// ahead: a goroutine inflates the rest into buf's room (see
	// InflateAhead); readers wait on grown for the bytes they ask.
	ahead bool
	grown *sync.Cond
	stop  bool // StopAhead was called
}

// ErrNoSection is returned by LazySection for a section the file lacks.
var ErrNoSection = errors.New("no such section")

// errOldCompression says debug/elf must read the section (zstd, or a
// compression the project does not inflate itself).
var errOldCompression = errors.New("compressed in a format left to debug/elf")

// LazySection returns the section called name, read on demand; the same
// *Lazy for every call, so bytes read once are read once. A compression
// other than zlib (zstd) is read whole through debug/elf on first use.
func (f *File) LazySection(name string) (*Lazy, error) {
	l, err := f.lazySection(name)
	if err != nil && err != ErrNoSection {
		return nil, fmt.Errorf("%s: section %s: %v", f.Path, name, err)
	}
	return l, err
}

func (f *File) lazySection(name string) (*Lazy, error) {
	f.lazyMu.Lock()
	defer f.lazyMu.Unlock()
	return f.lazySectionLocked(name)
}

// lazySectionLocked is lazySection with f.lazyMu held.
func (f *File) lazySectionLocked(name string) (*Lazy, error) {
	if l := f.lazy[name]; l != nil {
		return l, nil
	}
	s := f.dwarfSection(name)
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil, ErrNoSection
	}
	l, err := f.newLazy(s)
	if err != nil {
		return nil, err
	}
	if f.lazy == nil {
		f.lazy = map[string]*Lazy{}
	}
	f.lazy[name] = l
	return l, nil
}

func (f *File) newLazy(s *elf.Section) (*Lazy, error) {
	if end, ok := readerSize(f.r); ok && (s.Offset > end || s.FileSize > end-s.Offset) {
		return nil, fmt.Errorf("its %d bytes at %#x pass the end of the file (%d bytes): corrupt", s.FileSize, s.Offset, end)
	}
	l := &Lazy{size: s.Size}
	raw := io.NewSectionReader(f.r, int64(s.Offset), int64(s.FileSize))
	gnu := s.Flags&elf.SHF_COMPRESSED == 0 && strings.HasPrefix(s.Name, ".zdebug")
	if gnu {
		// "ZLIB", the inflated size (big-endian), a zlib stream; a
		// section without that header is not compressed (as debug/elf).
		var b [12]byte
		if n, _ := raw.ReadAt(b[:], 0); n < 12 || string(b[:4]) != "ZLIB" {
			gnu = false
		}
	}
	if s.Flags&elf.SHF_COMPRESSED == 0 && !gnu {
		l.size, l.prealloc = s.FileSize, prealloc(s.FileSize, 0)
		l.r = raw
		return l, nil
	}
	typ, size, hdr, err := f.chdr(raw, gnu)
	if err != nil {
		return nil, err
	}
	if size > maxInflate*s.FileSize+1<<20 {
		return nil, fmt.Errorf("the compression header claims %d bytes from %d: corrupt", size, s.FileSize)
	}
	l.size, l.prealloc = size, prealloc(size, s.FileSize)
	if typ != elf.COMPRESS_ZLIB {
		// debug/elf inflates what the project does not (zstd).
		l.r = &deferred{s: s}
		return l, nil
	}
	z, err := inflate.NewReader(f.r, int64(s.Offset)+hdr, int64(s.FileSize)-hdr)
	if err != nil {
		return nil, err
	}
	l.r, l.z = z, z
	return l, nil
}

// fill reads the section on into buf[at:], up to want bytes at least
// (want <= len(buf), buf holding the bytes before at), and returns the
// end of what it read: an inflated section is inflated straight into
// buf, and can end past want; past that end buf holds anything. At the
// section's end, the compressed stream must end too, its checksum right.
func (l *Lazy) fill(buf []byte, at, want int) (int, error) {
	if l.z == nil {
		k, err := io.ReadFull(l.r, buf[at:want])
		return at + k, err
	}
	var end int
	var err error
	if l.through != nil {
		end, err = l.through.fill(l.z, int(l.size), want)
		if end == int(l.size) {
			l.through = nil // the window freed
		}
	} else {
		buf = buf[:min(len(buf), int(l.size))]
		end, err = l.z.Into(buf, at, want)
	}
	switch {
	case err != nil:
	case end < want:
		err = io.ErrUnexpectedEOF
	case end == int(l.size) && !l.z.Done():
		err = inflate.ErrLong
	}
	return end, err
}

// deferred reads a section through debug/elf when first read.
type deferred struct {
	s *elf.Section
	r io.Reader
}

func (d *deferred) Read(p []byte) (int, error) {
	if d.r == nil {
		d.r = d.s.Open()
	}
	return d.r.Read(p)
}

// chdr reads the compression header of an SHF_COMPRESSED section: its
// type, uncompressed size and own size.
// With gnu, the header is a .zdebug section's.
func (f *File) chdr(r io.ReaderAt, gnu bool) (typ elf.CompressionType, size uint64, hdr int64, err error) {
	bo := f.ByteOrder
	if gnu {
		var b [12]byte
		if _, err := r.ReadAt(b[:], 0); err != nil {
			return 0, 0, 0, fmt.Errorf("compression header: %v", err)
		}
		return elf.COMPRESS_ZLIB, binary.BigEndian.Uint64(b[4:]), 12, nil
	}
	if f.Class == elf.ELFCLASS64 {
		var b [24]byte
		if _, err := r.ReadAt(b[:], 0); err != nil {
			return 0, 0, 0, fmt.Errorf("compression header: %v", err)
		}
		return elf.CompressionType(bo.Uint32(b[0:])), bo.Uint64(b[8:]), 24, nil
	}
	var b [12]byte
	if _, err := r.ReadAt(b[:], 0); err != nil {
		return 0, 0, 0, fmt.Errorf("compression header: %v", err)
	}
	return elf.CompressionType(bo.Uint32(b[0:])), uint64(bo.Uint32(b[4:])), 12, nil
}

// Read is how many of the section's bytes were read (inflated) so far.
func (l *Lazy) Read() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return uint64(len(l.buf))
}

// Size is the section's full (uncompressed) size.
func (l *Lazy) Size() uint64 { return l.size }

// maxInflate bounds what a compressed section may inflate to, as a
// multiple of its compressed size: zlib cannot pass about 1032 to 1, and
// DWARF compressed with zstd inflates less than 20 to 1. A header that
// claims more is corrupt (a fuzzed one asked for 64 GB).
const maxInflate = 1100

// prealloc is how much of an inflated section's buffer is allocated
// before reading: the size its header says, up to 16 times the
// compressed size and at least 16 MB (a corrupt header can claim any
// size); larger sections grow as read.
func prealloc(size, compressed uint64) uint64 {
	return min(size, max(16*compressed, 16<<20))
}

// Prefix returns the section's first n bytes, or all of them when it is
// shorter; an error says how far reading went (the caller names the
// section). The slices returned share one buffer: a later call's result
// extends an earlier one's.
func (l *Lazy) Prefix(n uint64) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n > l.size {
		n = l.size
	}
	for l.ahead && uint64(len(l.buf)) < n && l.err == nil {
		l.grown.Wait()
	}
	for uint64(len(l.buf)) < n && l.err == nil {
		if len(l.buf) == cap(l.buf) {
			// Room for what is asked (a prefix needs little), doubling,
			// but never more than the bytes read so far or prealloc
			// (a corrupt header can claim any size).
			c := uint64(cap(l.buf))
			grow := min(max(c, 1<<20, n-c), max(c, l.prealloc), l.size-c)
			l.buf = slices.Grow(l.buf, int(grow))
		}
		want := min(max(n-uint64(len(l.buf)), 256<<10), uint64(cap(l.buf)-len(l.buf)))
		end, err := l.fill(l.buf[:cap(l.buf)], len(l.buf), len(l.buf)+int(want))
		sectionBytes.Add(uint64(end - len(l.buf)))
		l.buf = l.buf[:end]
		if err != nil {
			l.err = fmt.Errorf("%d of %d bytes read: %v", len(l.buf), l.size, err)
		}
	}
	if uint64(len(l.buf)) < n {
		return nil, l.err
	}
	if uint64(len(l.buf)) == l.size {
		l.r = nil
	}
	return l.buf[:n:n], nil
}

// sectionBytes counts the bytes every Lazy of the process read (inflated
// where compressed): a progress line's measure.
var sectionBytes atomic.Uint64

// SectionBytes is how many bytes of sections the process read through
// LazySection so far (inflated where compressed): every DWARF section is
// read so.
func SectionBytes() uint64 { return sectionBytes.Load() }

// All returns the whole section.
func (l *Lazy) All() ([]byte, error) { return l.Prefix(l.size) }

// sectionBytes reads a whole DWARF section for DWARF: through Lazy,
// which inflates faster than debug/elf.
func (f *File) sectionBytes(name string) ([]byte, error) {
	l, err := f.lazySection(name)
	if err != nil {
		return nil, err
	}
	return l.All()
}

// PrefixSections reads the first info bytes of .debug_info (whole
// compile units) and the first line bytes of .debug_line (the line
// programs of those units), with the string and address sections whole,
// leaving the rest of both sections unread, and keeps them for
// DWARFSection and DebugLine as ReadDWARF does; range and location lists
// are left out (a type lookup reads neither). A file that needs
// relocations or has type units returns ok false: ReadDWARF reads it.
func (f *File) PrefixSections(info, line uint64) (ok bool, err error) {
	if !f.PrefixReadable() {
		return false, nil
	}
	err = Guard(f.Path, ".debug_info", func() error {
		data, err := f.prefixData(info, line)
		if err == nil {
			f.keepSections(data)
		}
		return err
	})
	return err == nil, err
}

// prefixData reads the sections PrefixSections reads, in the order of
// dwarfSections.
func (f *File) prefixData(info, line uint64) ([][]byte, error) {
	get := func(name string, n uint64) ([]byte, error) {
		l, err := f.lazySection(name)
		if err == ErrNoSection {
			return nil, nil
		}
		if err != nil {
			return nil, Decode(f.Path, name, NoOffset, err)
		}
		b, err := l.Prefix(n)
		if err != nil {
			return nil, Decode(f.Path, name, NoOffset, err)
		}
		return b, nil
	}
	sizes := map[string]uint64{".debug_info": info, ".debug_line": line}
	data := make([][]byte, len(dwarfSections))
	for i, name := range dwarfSections {
		if name == ".debug_ranges" || name == ".debug_rnglists" {
			continue
		}
		n, ok := sizes[name]
		if !ok {
			n = 1<<64 - 1
		}
		var err error
		if data[i], err = get(name, n); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// PrefixReadable reports whether PrefixSections can read the file: no
// relocations to apply, no type units.
func (f *File) PrefixReadable() bool {
	return f.Type != elf.ET_REL && f.dwarfSection(".debug_types") == nil
}

// readerSize is the size of what r reads, when r can tell.
func readerSize(r io.ReaderAt) (uint64, bool) {
	switch r := r.(type) {
	case interface{ Size() int64 }:
		return uint64(r.Size()), true
	case *os.File:
		if st, err := r.Stat(); err == nil && st.Mode().IsRegular() {
			return uint64(st.Size()), true
		}
	}
	return 0, false
}

// through inflates a section into a window, a piece at a time, each
// piece given to write at its offset (see InflateInto).
type through struct {
	win   []byte
	base  int // the section's offset of win[0]
	at    int // the end of what was inflated, in win
	write func(b []byte, off int64) error
}

// throughKeep is how much of what was inflated the window keeps when it
// slides: what a back-reference reads; throughRoom, what it inflates
// between slides.
const throughKeep = 32 << 10

var throughRoom = 4 << 20

// newThrough starts the window after read, the bytes read so far.
func newThrough(read []byte, write func(b []byte, off int64) error) *through {
	t := &through{win: make([]byte, throughKeep+throughRoom), write: write}
	k := min(len(read), throughKeep)
	t.base, t.at = len(read)-k, copy(t.win, read[len(read)-k:])
	return t
}

// fill inflates from z on until the section (of size bytes) is read to
// want at least, or ends; it returns the end of what was read.
func (t *through) fill(z *inflate.Reader, size, want int) (int, error) {
	for t.base+t.at < want {
		if t.at == len(t.win) {
			k := copy(t.win, t.win[t.at-throughKeep:t.at])
			t.base, t.at = t.base+t.at-k, k
		}
		out := t.win[:min(len(t.win), size-t.base)]
		next, err := z.Into(out, t.at, min(len(out), want-t.base))
		if next > t.at && err == nil {
			err = t.write(t.win[t.at:next], int64(t.base+t.at))
		}
		if err != nil {
			return t.base + t.at, err
		}
		if next == t.at {
			break // the stream's end, or the section's
		}
		t.at = next
	}
	return t.base + t.at, nil
}
