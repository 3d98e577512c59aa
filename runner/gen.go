package runner

import (
	"bufio"
	"io"

	"github.com/binscope/binscope/codegen"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/usage"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/symtab"
)

// GenOptions say which artifact Gen writes.
type GenOptions struct {
	// Format is "spec" (portable JSON), "bpf-c" (a libbpf-style
	// program), "bpftrace" or "perf" (perf probe commands).
	Format string
	// Exe is the binary whose debug info defines the probes; Target, when
	// not "", the file the artifact attaches to (a stripped copy with
	// the same build-id).
	Exe, Target string
	// CORE makes a bpf-c program relocate the fields it reads where it
	// loads (codegen.BPFCOptions.CORE).
	CORE     bool
	Defs     []string
	Matching Matching
	// Log receives what reference builds say.
	Log io.Writer
}

// Gen writes the probes the definitions make in Exe as an artifact other
// tools run. Errors: a usage error for an unknown format or without
// definitions; the resolver's; a Target of another build.
func Gen(w io.Writer, o *GenOptions) error {
	switch o.Format {
	case "spec", "bpftrace", "perf", "bpf-c":
	default:
		return usage.Errorf("--format %q: want spec, bpf-c, bpftrace or perf", o.Format)
	}
	if len(o.Defs) == 0 {
		return usage.Errorf("no probe definitions")
	}
	if o.CORE && o.Format != "bpf-c" {
		return usage.Errorf("--core is for --format=bpf-c")
	}
	defs, err := parseDefs(o.Defs, o.Matching.Filter)
	if err != nil {
		return err
	}
	exe, err := FindExe(o.Exe, 0)
	if err != nil {
		return err
	}
	o2 := *o
	o = &o2
	o.Exe = exe
	r, done, err := NewResolver(o.Exe, defs, o.Log)
	if err != nil {
		return err
	}
	defer done()
	so, err := o.Matching.options(o.Log)
	if err != nil {
		return err
	}
	ps, err := r.SpecWith(defs, so)
	if err != nil {
		return err
	}
	onto := o.Exe
	if o.Target != "" {
		if err := SameBuild(o.Target, ps.BuildID); err != nil {
			return err
		}
		onto = o.Target
	}
	if ps, err = provenWith(onto, r.FileModel(), ps, o.Log, so.Missing); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	switch o.Format {
	case "bpftrace":
		return codegen.WriteBpftrace(bw, ps, bpftraceTarget(o.Exe, o.Target))
	case "perf":
		return codegen.WritePerf(bw, ps)
	case "bpf-c":
		return codegen.WriteBPFC(bw, ps, &codegen.BPFCOptions{Types: r.Types(defs), CORE: o.CORE})
	}
	return spec.WriteSpec(bw, ps)
}

// bpftraceTarget says where a bpftrace script attaches: a target without a
// symbol table (stripped) takes file offsets; one with a symbol table,
// symbols as bpftrace reads them from that file (not its debug file).
func bpftraceTarget(bin, target string) *codegen.BpftraceOptions {
	o := &codegen.BpftraceOptions{Target: target}
	path := bin
	if target != "" {
		path = target
	}
	ef, err := elfx.Open(path)
	if err != nil {
		return o
	}
	defer ef.Close()
	o.Library = isLibrary(ef)
	if ef.Section(".symtab") == nil && target != "" {
		o.FileOffsets = true
		return o
	}
	tab := symtab.Read(ef)
	o.Symbol = func(addr uint64) (codegen.Symbol, bool) {
		s, ok := tab.Covering(addr)
		if !ok {
			return codegen.Symbol{}, false
		}
		if at := tab.At(s.Addr); len(at) > 1 {
			s = symtab.Plainest(at)
		}
		return codegen.Symbol{Name: s.Name, Addr: s.Addr, Size: s.Size, Unique: len(tab.Named(s.Name)) == 1}, true
	}
	for _, name := range []string{"runtime.morestack.abi0", "runtime.morestack"} {
		if ms := tab.Named(name); len(ms) == 1 {
			o.Morestack = &codegen.Symbol{Name: name, Addr: ms[0].Addr, Size: ms[0].Size, Unique: true}
			break
		}
	}
	return o
}
