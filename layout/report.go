package layout

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strconv"
	"sync/atomic"

	"github.com/binscope/binscope/types"
)

// Report says what a pahole-style run prints of each selected type, and
// which types it leaves out. A nil *Report prints every type as WriteText
// does.
type Report struct {
	Holes    int // -H: only types with at least this many holes
	BitHoles int // -B: only types with at least this many bit holes
	// HoleSize (-z, --hole_size_ge) shows only types with a hole of at
	// least this many bytes between two members; 0 shows all.
	HoleSize int64
	Sizes    bool // -s: WriteSizes
	Packable bool // -P: only types the suggested order makes smaller, as WritePackable
	// Reorganize (-R) prints WriteReorganized.
	Reorganize bool
	// JSON collects the layouts and prints them as one WriteJSON array.
	JSON bool
	// Analyze and Print are the analysis's and the printers' options.
	Analyze *Options
	Print   *PrintOptions
	// Tool starts each warning line ("gopahole").
	Tool string
	// Packed shows only the types printed packed (--packed); Flexible
	// only those ending in a flexible array (--with_flexible_array);
	// EmbeddedFlexible only structs holding a struct that ends in one
	// (--with_embedded_flexible_array).
	Packed, Flexible, EmbeddedFlexible bool
	// FixSillyBitfields reads a bitfield as wide as its type as the plain
	// member it is (--fixup_silly_bitfields).
	FixSillyBitfields bool
	// Sort prints the types in the order of their names (--sort), not
	// the loader's.
	Sort bool
	// Count prints one row per type, its name and a number, instead of
	// its layout.
	Count Count
	// Separator separates the fields of Sizes, Packable and Count rows
	// (-t); "" means a tab.
	Separator string
	// NoForcePadding leaves out pahole's "Force padding:" guess, which
	// DWARF's types otherwise print (--suppress_force_paddings).
	NoForcePadding bool
}

// Count is a number a report prints for each type.
type Count uint8

const (
	CountNone    Count = iota
	CountMembers       // -n, --nr_members: its members
	CountNameLen       // -N, --class_name_len: its name's length in bytes
	CountName          // -z alone: its name and nothing else
)

// Source hands a run its types: it loads them and calls each with every
// named type as it is converted when it can (streamed), or returns them
// all in a spec.
type Source func(each func(types.Type)) (spec *types.Spec, streamed bool, err error)

// Run prints the types sel picks from load to w, as r says, analysed and
// printed in batches on every CPU but written in the order of the types,
// so the output is a serial run's. A type the analysis refuses, or one it
// warns about, is a line "TOOL: FILE: TYPE: why" on warn, and the rest
// are printed; file names the source in those lines until its spec says.
// The error is the loader's, the selection's or the writer's; an error
// of a loader that left out corrupt records (types.ErrPartial) comes
// after the rest is printed.
func (r *Report) Run(w, warn io.Writer, sel *Selection, file string, load Source) error {
	var rc Report
	if r != nil {
		rc = *r
	}
	var po PrintOptions
	if rc.Print != nil {
		po = *rc.Print
	}
	r, rc.Print = &rc, &po // ForcePadding is set below
	pl := newPipeline(r, w, warn)
	var each func(types.Type)
	if len(sel.Classes) == 0 && !r.Sort {
		// Types are analysed and printed while the loader is still
		// converting the rest (BTF hands them over one by one).
		pl.file = file
		pk := NewPicker(sel)
		each = func(t types.Type) {
			for _, n := range pk.TakeAll(t) {
				pl.add(n)
			}
		}
	}
	spec, streamed, err := load(each)
	if err != nil && (spec == nil || !errors.Is(err, types.ErrPartial)) {
		pl.abort()
		return err
	}
	// A loader that left out corrupt records: the rest is printed, then
	// the error.
	partial := err
	if !streamed {
		pl.file = spec.Path
		// pahole guesses tail bitfields where the format records alignment
		r.Print.ForcePadding = spec.Format == "dwarf" && !r.NoForcePadding
		picked, err := Select(spec, sel)
		if err != nil {
			pl.abort()
			return err
		}
		if r.Sort {
			sort.SliceStable(picked, func(i, j int) bool { return picked[i].Name < picked[j].Name })
		}
		for _, n := range picked {
			pl.add(n)
		}
	}
	results, err := pl.close()
	if err != nil {
		return err
	}
	if r.JSON {
		if err := WriteJSON(w, results, r.Print); err != nil {
			return err
		}
	}
	return partial
}

// render analyses one type and prints it to out (warnings to warn), or
// returns its layout for JSON; nil when the report leaves it out.
func (r *Report) render(n Named, file string, out, warn *bytes.Buffer) (*Layout, error) {
	if n.Struct == nil {
		if r.JSON || r.Sizes || r.Packed || r.Flexible || r.EmbeddedFlexible || r.Count != CountNone || r.Packable || r.Reorganize || r.Holes > 0 || r.BitHoles > 0 || r.HoleSize > 0 {
			return nil, nil // no layout: a typedef or an enum
		}
		return nil, WriteDecl(out, n.Decl, r.Print)
	}
	if (r.Flexible && !flexible(n.Struct)) || (r.EmbeddedFlexible && !embedsFlexible(n.Struct)) {
		return nil, nil
	}
	if r.FixSillyBitfields {
		n.Struct = fixSilly(n.Struct)
	}
	l, err := Analyze(n.Struct, r.Analyze)
	if err != nil {
		fmt.Fprintf(warn, "%s: %s: %s: %v\n", r.Tool, file, n.Name, err)
		return nil, nil
	}
	l.Name = n.Name
	if l.Warning != "" {
		fmt.Fprintf(warn, "%s: %s: %s: %s\n", r.Tool, file, n.Name, l.Warning)
	}
	if len(l.Holes) < r.Holes || len(l.BitHoles) < r.BitHoles || (r.Packed && !l.Packed) || !l.hasHole(r.HoleSize) {
		return nil, nil
	}
	var reorg *Reorganized
	if r.Packable || r.Reorganize {
		reorg = Reorganize(l, r.Analyze)
		if r.Packable && (reorg == nil || reorg.Saved() <= 0) {
			return nil, nil
		}
	}
	switch {
	case r.JSON:
		return l, nil
	case r.Count == CountMembers:
		return nil, r.row(out, l.Name, int64(l.memberCount()))
	case r.Count == CountNameLen:
		return nil, r.row(out, l.Name, int64(len(l.Name)))
	case r.Count == CountName:
		return nil, r.row(out, l.Name)
	case r.Sizes:
		holes := len(l.Holes)
		if l.Kind == types.KindUnion {
			holes = 0
		}
		return nil, r.row(out, l.Name, l.Size, int64(holes))
	case r.Packable && !r.Reorganize:
		return nil, r.row(out, reorg.From.Name, reorg.From.Size, reorg.Layout.Size, reorg.Saved())
	case r.Reorganize:
		return nil, WriteReorganized(out, reorg, r.Print)
	}
	return nil, WriteText(out, l, r.Print)
}

// row prints a type's name and numbers, separated by r.Separator (a tab
// by default), as pahole's -s, -P, -n and -N rows.
func (r *Report) row(out *bytes.Buffer, name string, nums ...int64) error {
	sep := r.Separator
	if sep == "" {
		sep = "\t"
	}
	out.WriteString(name)
	for _, n := range nums {
		out.WriteString(sep)
		out.WriteString(strconv.FormatInt(n, 10))
	}
	out.WriteByte('\n')
	return nil
}

// pipeline analyses and prints types in batches on every CPU and writes
// the batches in the order the types were added.
type pipeline struct {
	r       *Report
	file    string // set before the first add
	cur     *batch
	work    chan *batch
	order   chan *batch
	done    chan struct{}
	results []*Layout
	err     error
	discard atomic.Bool
}

type batch struct {
	types     []Named
	out, warn bytes.Buffer
	layouts   []*Layout
	err       error
	done      chan struct{}
}

const batchSize = 128

func newPipeline(r *Report, w, warn io.Writer) *pipeline {
	p := &pipeline{
		r:     r,
		work:  make(chan *batch, 64),
		order: make(chan *batch, 1<<16),
		done:  make(chan struct{}),
	}
	for range runtime.GOMAXPROCS(0) {
		go p.worker()
	}
	go p.writer(w, warn)
	return p
}

func (p *pipeline) worker() {
	for b := range p.work {
		for _, n := range b.types {
			l, err := p.r.render(n, p.file, &b.out, &b.warn)
			if err != nil {
				b.err = err
				break
			}
			if l != nil {
				b.layouts = append(b.layouts, l)
			}
		}
		close(b.done)
	}
}

// writer writes the batches in order, keeps their layouts, and stops
// writing at the first error.
func (p *pipeline) writer(w, warn io.Writer) {
	defer close(p.done)
	for b := range p.order {
		<-b.done
		if p.err != nil || p.discard.Load() {
			continue
		}
		if b.err != nil {
			p.err = b.err
			continue
		}
		warn.Write(b.warn.Bytes())
		if _, err := w.Write(b.out.Bytes()); err != nil {
			p.err = err
		}
		p.results = append(p.results, b.layouts...)
	}
}

func (p *pipeline) add(n Named) {
	if p.cur == nil {
		p.cur = &batch{done: make(chan struct{}), types: make([]Named, 0, batchSize)}
		p.cur.out.Grow(batchSize * 512) // a kernel struct's text is 430 bytes on average
	}
	p.cur.types = append(p.cur.types, n)
	if len(p.cur.types) == batchSize {
		p.flush()
	}
}

func (p *pipeline) flush() {
	if p.cur != nil {
		p.order <- p.cur
		p.work <- p.cur
		p.cur = nil
	}
}

// abort drops whatever is not written yet and waits for the workers.
func (p *pipeline) abort() {
	p.discard.Store(true)
	p.close()
}

// close waits for every batch and returns the layouts kept for JSON and
// the first error.
func (p *pipeline) close() ([]*Layout, error) {
	p.flush()
	close(p.work)
	close(p.order)
	<-p.done
	return p.results, p.err
}
