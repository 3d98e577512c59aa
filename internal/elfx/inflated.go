package elfx

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"sync"
)

// InflatedSections are the DWARF sections of the file that are compressed
// (SHF_COMPRESSED), inflated whole so far, by name: what a cache may keep
// so that a later run need not inflate them again (see UseInflated).
func (f *File) InflatedSections() map[string][]byte {
	f.lazyMu.Lock()
	defer f.lazyMu.Unlock()
	out := map[string][]byte{}
	for _, name := range dwarfSections {
		s, l := f.Section(name), f.lazy[name]
		if s == nil || s.Flags&elf.SHF_COMPRESSED == 0 || l == nil {
			continue
		}
		l.mu.Lock()
		if uint64(len(l.buf)) == l.size {
			out[name] = l.buf
		}
		l.mu.Unlock()
	}
	return out
}

// UseInflated gives the file the inflated contents of its compressed
// section name (read from a cache, as InflatedSections gave them): its
// readers (ReadDWARF, LazySection, PrefixSections) read b and inflate nothing.
// It reports false, and changes nothing, when the file has no such
// compressed section, b is not its size, or the section was read already.
func (f *File) UseInflated(name string, b []byte) bool {
	s := f.Section(name)
	if s == nil || s.Flags&elf.SHF_COMPRESSED == 0 {
		return false
	}
	_, size, _, err := f.chdr(io.NewSectionReader(f.r, int64(s.Offset), int64(s.FileSize)), false)
	if err != nil || size != uint64(len(b)) {
		return false
	}
	f.lazyMu.Lock()
	defer f.lazyMu.Unlock()
	if f.lazy[name] != nil {
		return false
	}
	if f.lazy == nil {
		f.lazy = map[string]*Lazy{}
	}
	f.lazy[name] = &Lazy{buf: b, size: size}
	return true
}

// CompressedDWARF are the DWARF sections InflatedSections gives once each
// is read whole, with their inflated sizes, from their compression
// headers: nothing is inflated.
func (f *File) CompressedDWARF() map[string]uint64 {
	out := map[string]uint64{}
	for _, name := range dwarfSections {
		s := f.Section(name)
		if s == nil || s.Flags&elf.SHF_COMPRESSED == 0 {
			continue
		}
		if _, size, _, err := f.chdr(io.NewSectionReader(f.r, int64(s.Offset), int64(s.FileSize)), false); err == nil {
			out[name] = size
		}
	}
	return out
}

// InflateTo writes the contents of the section name, inflated when
// compressed, to w as they are read, holding none of them: a cache entry
// of a large file's DWARF is written so, and mapped (see UseInflated).
func (f *File) InflateTo(name string, w io.Writer) error {
	s := f.dwarfSection(name)
	if s == nil || s.Type == elf.SHT_NOBITS {
		return fmt.Errorf("%s: section %s: %w", f.Path, name, ErrNoSection)
	}
	l, err := f.newLazy(s)
	if err != nil {
		return fmt.Errorf("%s: section %s: %v", f.Path, name, err)
	}
	n, err := io.CopyBuffer(w, l.r, make([]byte, 256<<10))
	sectionBytes.Add(uint64(n))
	if err == nil && uint64(n) != l.size {
		err = fmt.Errorf("%d of %d bytes read", n, l.size)
	}
	if err != nil {
		return fmt.Errorf("%s: section %s: %v", f.Path, name, err)
	}
	return nil
}

// InflateInto makes dst, of the inflated size of the compressed section
// name, the buffer it is inflated into; what was read of it so far is
// copied there. With write, dst is read-only (the index cache's entry,
// mapped: see cache.Create): the section is inflated a piece at a time
// into a window and each piece given to write, which puts it at its
// offset in dst (the readers read dst as written). It reports false, and
// changes nothing, when the file has no such compressed section, dst is
// not its size, or reading it failed before its end.
func (f *File) InflateInto(name string, dst []byte, write func(b []byte, off int64) error) bool {
	s := f.Section(name)
	if s == nil || s.Flags&elf.SHF_COMPRESSED == 0 {
		return false
	}
	l, err := f.lazySection(name)
	if err != nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.size != uint64(len(dst)) || (l.err != nil && uint64(len(l.buf)) != l.size) {
		return false
	}
	if write == nil {
		l.buf = dst[:copy(dst, l.buf)]
		return true
	}
	if l.z == nil && uint64(len(l.buf)) != l.size {
		return false // not inflated here (zstd): read into a buffer it writes
	}
	if len(l.buf) > 0 && write(l.buf, 0) != nil {
		return false
	}
	if uint64(len(l.buf)) != l.size {
		l.through = newThrough(l.buf, write)
	}
	l.buf = dst[:len(l.buf)]
	return true
}

// InflateAhead inflates the rest of each compressed section of names
// whose buffer InflateInto gave, one after another, on a goroutine of
// their own, a step at a time: a reader asking for a prefix
// (Lazy.Prefix, PrefixSections) waits for that much only, and reads it
// while the rest inflates on another core. Sections without such a
// buffer (inflated on the heap, which grows as read) are left to be read
// as asked. It reports whether each section of names is so inflated, or
// read whole already. StopAhead stops it.
func (f *File) InflateAhead(names ...string) bool {
	all := true
	var ls []*Lazy
	var ns []string
	for _, name := range names {
		l, err := f.lazySection(name)
		if err != nil {
			all = false
			continue
		}
		l.mu.Lock()
		if !l.ahead && l.r != nil && l.err == nil && uint64(cap(l.buf)) == l.size && uint64(len(l.buf)) < l.size {
			l.ahead, l.grown = true, sync.NewCond(&l.mu)
			ls, ns = append(ls, l), append(ns, name)
		}
		all = all && (l.ahead || uint64(len(l.buf)) == l.size)
		l.mu.Unlock()
	}
	if len(ls) > 0 {
		go func() {
			for i, l := range ls {
				l.inflateAhead(f.Path, ns[i])
			}
		}()
	}
	return all
}

// StopAhead stops inflating ahead (InflateAhead) at the next step: the
// sections not inflated whole then end with an error.
func (f *File) StopAhead() {
	f.lazyMu.Lock()
	defer f.lazyMu.Unlock()
	for _, l := range f.lazy {
		l.mu.Lock()
		l.stop = true
		l.mu.Unlock()
	}
}

// errStopped ends a section StopAhead stopped.
var errStopped = errors.New("inflating stopped")

// aheadStep is how many bytes InflateAhead inflates between telling the
// readers waiting.
var aheadStep = 4 << 20

// inflateAhead reads the rest of l into its buffer's room, publishing
// each step; only this goroutine reads l.r and writes past len(l.buf).
func (l *Lazy) inflateAhead(path, name string) {
	l.mu.Lock()
	buf, at := l.buf[:l.size], len(l.buf)
	l.mu.Unlock()
	var err error
	for at < len(buf) && err == nil {
		end := min(at+aheadStep, len(buf))
		next := at
		err = Guard(path, name, func() (err error) {
			next, err = l.fill(buf, at, end)
			return err
		})
		sectionBytes.Add(uint64(next - at))
		at = next
		l.mu.Lock()
		l.buf = buf[:at]
		if err == nil && l.stop && at < len(buf) {
			err = errStopped
		}
		if err != nil {
			l.err = fmt.Errorf("%d of %d bytes read: %v", at, l.size, err)
		} else if at == len(buf) {
			l.r = nil
		}
		l.grown.Broadcast()
		l.mu.Unlock()
	}
}
