package runner

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/goref"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/usage"
	"github.com/binscope/binscope/loader"
	"github.com/binscope/binscope/probe"
	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/stack"
	"github.com/binscope/binscope/types"
)

// Options say what a run probes, where, and where it writes.
type Options struct {
	Exe      string   // -x: the file to probe; "" means Run's binary or PID's executable
	PID      int      // -p: only this process (and its executable, or a library it maps)
	SpecFile string   // --spec: the probes, from goprobe gen --format=spec, instead of Defs
	Defs     []string // probe definitions
	Run      []string // the command to run and its arguments; none means wait for PID or SIGINT
	Stop     Stop     // trace, stat, hist: stop after a number of hits or a time
	Matching Matching // wildcards' bound, and what a definition that names nothing does
	// Kernel attaches and starts the command; nil means Host.
	Kernel Kernel
	// Stdout and Stderr are the command's, shared with what the run
	// prints (events, tables) and its notes ("goprobe: ...").
	Stdout, Stderr io.Writer
}

func (o *Options) kernel() Kernel {
	if o.Kernel == nil {
		return Host
	}
	return o.Kernel
}

func (o *Options) note(format string, args ...any) {
	fmt.Fprintf(o.Stderr, "goprobe: "+format+"\n", args...)
}

// probeTarget is the file to attach to: -x, CMD's binary, or the process's.
func (o *Options) probeTarget() (string, error) {
	switch {
	case o.Exe != "":
		return FindExe(o.Exe, o.PID)
	case len(o.Run) > 0:
		p, err := exec.LookPath(o.Run[0])
		if err != nil {
			return "", fmt.Errorf("%s: %v", o.Run[0], err)
		}
		return filepath.Abs(p)
	case o.PID > 0:
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", o.PID))
		if err != nil {
			return "", processError(o.PID, err)
		}
		if !stack.SameRoot(o.PID) {
			// A container: the path is the process's, in its mount
			// namespace; here the file is under its root.
			return fmt.Sprintf("/proc/%d/root%s", o.PID, exe), nil
		}
		return exe, nil
	case defsBin(o.Defs) != "":
		return FindExe(defsBin(o.Defs), 0)
	}
	if fs, err := usdtFiles(o.Defs); len(fs) > 0 || err != nil {
		if err != nil {
			return "", err
		}
		if len(fs) > 1 {
			return "", fmt.Errorf("%s: %d files that running processes map hold it (%s): name one with -x", o.Defs[0], len(fs), strings.Join(fs, ", "))
		}
		return fs[0], nil
	}
	return "", usage.Errorf("name the binary with -x, a process with -p, or a command after --")
}

// processError says in one line why process pid cannot be read.
func processError(pid int, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("process %d does not exist: give -p the id of a running process (pgrep NAME lists them)", pid)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("process %d cannot be read by this user: run as root or as the process's owner", pid)
	}
	return fmt.Errorf("process %d: %v", pid, err)
}

// onlyCommand reports whether probes on target should see only the
// command and its descendants: whenever there is a command, as bpftrace's
// -c does. Other processes running the same file (another copy of the
// command's own binary, or a library every process maps) are not counted.
func onlyCommand(run []string) bool { return len(run) > 0 }

// loadSpec reads the spec file and checks that it was made for target,
// or takes the probes cached for target's build, or builds the spec from
// defs and target's debug info. Without defs and a spec file, the cache
// must hold the build's probes.
func (o *Options) loadSpec(defs []string, target string) (*spec.Spec, error) {
	if o.SpecFile != "" {
		if len(defs) > 0 {
			return nil, usage.Errorf("--spec holds the probes: give no definitions")
		}
		r, err := os.Open(o.SpecFile)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		s, err := spec.ReadSpec(r, o.SpecFile)
		if err != nil {
			return nil, err
		}
		if err := SameBuild(target, s.BuildID); err != nil {
			return nil, err
		}
		return proven(target, nil, s, o.Stderr)
	}
	// Probes cached for this build (goprobe gen --cache) were resolved
	// where the debug info was: they serve a stripped copy.
	if s, ok, err := o.cachedSpec(target, defs); ok || err != nil {
		if err != nil {
			return nil, err
		}
		return proven(target, nil, s, o.Stderr)
	}
	return o.Matching.resolve(target, defs, o.Stderr)
}

// Matching says how definitions that name several places or none
// resolve (see probe.SpecOptions).
type Matching struct {
	// MaxSites bounds the sites of wildcard definitions (--max-sites;
	// 0: probe.DefaultMaxSites, < 0: none).
	MaxSites int
	// Missing is error, warn or ignore (--missing-probes; "" is error).
	Missing string
	// Filter is a predicate every definition's hits must pass besides
	// its own (--filter; see probe.Filter).
	Filter string
}

// options are m as the resolver takes them, warnings going to log.
func (m Matching) options(log io.Writer) (*probe.SpecOptions, error) {
	missing, err := probe.ParseMissing(m.Missing)
	if err != nil {
		return nil, usage.Wrap(err)
	}
	so := &probe.SpecOptions{MaxSites: m.MaxSites, Missing: missing}
	if log != nil {
		so.Warn = func(s string) { fmt.Fprintf(log, "goprobe: warning: %s\n", s) }
	}
	return so, nil
}

// resolve is Resolve with m's options.
func (m Matching) resolve(target string, defs []string, log io.Writer) (*spec.Spec, error) {
	so, err := m.options(log)
	if err != nil {
		return nil, err
	}
	if len(defs) == 0 {
		return nil, usage.Errorf("no probe definitions")
	}
	ds, err := parseDefs(defs, m.Filter)
	if err != nil {
		return nil, err
	}
	if err := sameBin(ds, target); err != nil {
		return nil, err
	}
	r, done, err := NewResolver(target, ds, log)
	if err != nil {
		return nil, err
	}
	defer done()
	s, err := r.SpecWith(ds, so)
	if err != nil {
		return nil, err
	}
	return provenWith(target, r.FileModel(), s, log, so.Missing)
}

// Resolve parses defs and resolves them against target's DWARF or, when
// it has none (a stripped binary, a distribution's library), its
// .gopclntab or symbols; a Go binary without DWARF gets the parameters of
// the functions the definitions read from a reference build, said on log.
// Errors: a usage error without definitions; the resolver's
// (types.ErrNotFound for a function the file does not have).
func Resolve(target string, defs []string, log io.Writer) (*spec.Spec, error) {
	return Matching{}.resolve(target, defs, log)
}

// sameBin checks that the raw address probes naming a file (BIN:0xADDR)
// name target.
func sameBin(ds []*probe.Def, target string) error {
	for _, d := range ds {
		if d.Bin == "" {
			continue
		}
		p, err := FindExe(d.Bin, 0)
		if err != nil {
			return err
		}
		a, err1 := os.Stat(p)
		b, err2 := os.Stat(target)
		if err1 != nil || err2 != nil || !os.SameFile(a, b) {
			return usage.Errorf("%s: the address is in %s, the probes go on %s: give -x %s", d.Text, d.Bin, target, d.Bin)
		}
	}
	return nil
}

// defsBin is the file the raw address probes of defs name (BIN:0xADDR),
// the target when nothing else names one; "" when none does.
func defsBin(defs []string) string {
	for _, def := range defs {
		if d, err := probe.Parse(def); err == nil && d.Bin != "" {
			return d.Bin
		}
	}
	return ""
}

// parseDefs parses the definitions, each given the filter (--filter)
// besides its own.
func parseDefs(defs []string, filter string) ([]*probe.Def, error) {
	var all *probe.Filter
	if filter != "" {
		var err error
		if all, err = probe.ParseFilter(filter); err != nil {
			return nil, usage.Wrap(err)
		}
	}
	var ds []*probe.Def
	for _, a := range defs {
		d, err := probe.Parse(a)
		if err != nil {
			return nil, err
		}
		if all != nil {
			d.Filter = d.Filter.And(all)
		}
		ds = append(ds, d)
	}
	return ds, nil
}

// NewResolver resolves against target's DWARF or, without it, its
// .gopclntab or symbols (see Resolve); done releases the file.
// USDT probes need no debug info: definitions of USDT probes alone are
// resolved from the file's notes and symbols.
func NewResolver(target string, defs []*probe.Def, log io.Writer) (r *probe.Resolver, done func(), err error) {
	err = types.ErrNoDebugInfo
	if !onlyUSDT(defs) {
		var df *dwarf.File
		// The compressed sections inflated, from the index cache.
		opts := &dwarf.Options{SavedSections: true}
		if log != nil { // a split DWARF object or a dwz file not found
			opts.Warn = func(msg string) { fmt.Fprintf(log, "goprobe: %s\n", msg) }
		}
		if df, err = dwarf.Open(target, opts); err == nil {
			r, err := probe.NewResolver(df)
			if err != nil {
				df.Close()
				return nil, nil, err
			}
			return r, func() { r.Close(); df.Close() }, nil
		}
	}
	if !errors.Is(err, types.ErrNoDebugInfo) {
		return nil, nil, err
	}
	ef, oerr := elfx.Open(target)
	if oerr != nil {
		if onlyUSDT(defs) {
			return nil, nil, oerr
		}
		return nil, nil, err
	}
	if onlyUSDT(defs) {
		r, err = probe.NewUSDTResolver(ef)
	} else {
		r, err = symbolResolver(ef, defs, log)
	}
	if err != nil {
		ef.Close()
		return nil, nil, err
	}
	return r, func() { r.Close(); ef.Close() }, nil
}

// onlyUSDT reports whether every definition is a USDT probe's.
func onlyUSDT(defs []*probe.Def) bool {
	for _, d := range defs {
		if d.USDT == nil {
			return false
		}
	}
	return len(defs) > 0
}

// symbolResolver resolves against ef, which has no debug info. When ef
// is a Go binary and a definition reads arguments, the functions the
// definitions name get their parameters from a reference build.
func symbolResolver(ef *elfx.File, defs []*probe.Def, log io.Writer) (*probe.Resolver, error) {
	var names []string
	for _, d := range defs {
		if d.Func != "" && readsArgs(d) {
			names = append(names, d.Func)
		}
	}
	if len(names) == 0 || loader.RefOff() {
		return probe.NewSymbolResolver(ef)
	}
	m, err := code.NewFromELF(ef)
	if err != nil {
		return nil, err
	}
	if !goref.Applies(m) {
		return probe.NewSymbolResolver(ef)
	}
	ref, err := loader.AttachRef(m, names, log)
	if err != nil {
		return nil, err
	}
	if ref != nil && log != nil {
		fmt.Fprintf(log, "goprobe: %s has no DWARF: %s\n", ef.Path, ref.Note())
	}
	return probe.NewModelResolver(m)
}

// readsArgs reports whether d reads a parameter, a result or a field:
// anything but a register.
func readsArgs(d *probe.Def) bool {
	for _, a := range d.Args {
		if !strings.HasPrefix(a.Base, "%") {
			return true
		}
	}
	return false
}

// SameBuild refuses a target whose build-id is not the spec's.
func SameBuild(target, buildID string) error {
	ef, err := elfx.Open(target)
	if err != nil {
		return err
	}
	defer ef.Close()
	if ef.BuildID != buildID || buildID == "" {
		return fmt.Errorf("%s: build-id %q is not the probed binary's %q: the probes would land at wrong addresses", target, ef.BuildID, buildID)
	}
	return nil
}

// targetSpec picks the file to probe and resolves the definitions against
// it: -x, CMD's binary, or with -p the process's executable, else the
// first library it maps that has the functions (goprobe trace -p PID
// 'malloc size').
func (o *Options) targetSpec() (string, *spec.Spec, error) {
	kernel, err := o.kernelEvents()
	if err != nil {
		return "", nil, err
	}
	target, err := o.probeTarget()
	if err != nil {
		if len(kernel) > 0 && len(o.Defs) == 0 {
			return "", withKernelEvents(probe.TracepointSpec(), kernel), nil
		}
		return "", nil, err
	}
	if len(kernel) > 0 && len(o.Defs) == 0 && o.SpecFile == "" {
		return target, withKernelEvents(probe.TracepointSpec(), kernel), nil
	}
	target, spec, err := o.functionSpec(target)
	if err != nil {
		return "", nil, err
	}
	return target, withKernelEvents(spec, kernel), nil
}

// kernelEvents takes the definitions of kernel events (tracepoints) out
// of o.Defs and resolves them; the rest are functions.
func (o *Options) kernelEvents() ([]spec.Probe, error) {
	var funcs []string
	var out []spec.Probe
	for _, d := range o.Defs {
		isEvent, err := probe.KernelEvent(d)
		if err != nil {
			return nil, usage.Wrap(err)
		}
		if !isEvent {
			funcs = append(funcs, d)
			continue
		}
		var all *probe.Filter
		if o.Matching.Filter != "" {
			if all, err = probe.ParseFilter(o.Matching.Filter); err != nil {
				return nil, usage.Wrap(err)
			}
		}
		p, err := probe.TracepointProbe(d, all)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	o.Defs = funcs
	return out, nil
}

// withKernelEvents appends the tracepoint probes to spec.
func withKernelEvents(fs *spec.Spec, kernel []spec.Probe) *spec.Spec {
	if len(kernel) == 0 {
		return fs
	}
	s := *fs
	s.Probes = append(append([]spec.Probe(nil), fs.Probes...), kernel...)
	return &s
}

// functionSpec is targetSpec for the function probes.
func (o *Options) functionSpec(target string) (string, *spec.Spec, error) {
	if o.SpecFile == "" {
		lib, err := o.libraryTarget(target)
		if err != nil {
			return "", nil, err
		}
		if lib != "" {
			spec, err := o.specFor(lib)
			return lib, spec, err
		}
	}
	spec, err := o.specFor(target)
	// The executable lacks the functions, or has nothing to probe by (a
	// stripped program whose symbols are only the ones it imports).
	missing := errors.Is(err, types.ErrNotFound) || errors.Is(err, types.ErrNoDebugInfo)
	if err == nil || !missing || o.PID == 0 || o.Exe != "" || o.SpecFile != "" {
		return target, spec, err
	}
	for _, p := range mappedFiles(o.PID, target) {
		if s, lerr := o.specFor(p); lerr == nil {
			return p, s, nil
		}
	}
	return "", nil, fmt.Errorf("%v; no library process %d maps has them all either (name the file with -x)", err, o.PID)
}

// specFor resolves the definitions against target; a definition of an
// indirect function (strlen) is aimed at the implementation the CPU runs.
func (o *Options) specFor(target string) (*spec.Spec, error) {
	ds, notes := o.Defs, []string(nil)
	if o.SpecFile == "" {
		var err error
		if ds, notes, err = resolveIFuncs(o.Defs, target, o.PID, o.kernel()); err != nil {
			return nil, err
		}
	}
	s, err := o.loadSpec(ds, target)
	if err == nil {
		for _, n := range notes {
			o.note("%s", n)
		}
	}
	return s, err
}

// mappedFiles are the files process pid maps besides target, in the
// dynamic loader's order (the C library before the loader and its own
// malloc), then the files loaded later (dlopen); none when its mappings
// cannot be read.
func mappedFiles(pid int, target string) []string {
	ms, err := stack.ProcMappings(pid)
	if err != nil {
		return nil
	}
	real := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return p
	}
	loaded := stack.LoadedFiles(target)
	rank := map[string]int{}
	for i, p := range loaded {
		rank[real(p)] = i + 1
	}
	later := len(loaded) + 1
	var files []string
	seen := map[string]bool{real(target): true}
	for _, m := range ms {
		p := m.File // a container's file, opened through its root: no path here names it
		if p == "" {
			p = real(m.Path)
		}
		if !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
	}
	order := func(p string) int {
		if r := rank[p]; r > 0 {
			return r
		}
		return later
	}
	sort.SliceStable(files, func(i, j int) bool { return order(files[i]) < order(files[j]) })
	return files
}

// reportUnavailable says, before attaching, which sites cannot read which
// arguments, and which read some only for some calls.
func reportUnavailable(w io.Writer, spec *spec.Spec) {
	for _, p := range spec.Probes {
		for _, s := range p.Sites {
			if s.Note != "" {
				fmt.Fprintf(w, "goprobe: %s: %s site at %#x in %s: %s\n", p.Def, s.Kind, s.Addr, s.Function, s.Note)
			}
			for _, a := range s.Args {
				switch {
				case a.Unavailable != "":
					fmt.Fprintf(w, "goprobe: %s: %s site at %#x in %s: %s: %s\n", p.Def, s.Kind, s.Addr, s.Function, a.Name, a.Unavailable)
				case a.Fails != "":
					fmt.Fprintf(w, "goprobe: %s: %s site at %#x in %s: %s: ? for some calls: %s\n", p.Def, s.Kind, s.Addr, s.Function, a.Name, a.Fails)
				}
			}
			if s.Filter == nil {
				continue
			}
			for _, a := range s.Filter.Operands {
				if a.Unavailable != "" {
					fmt.Fprintf(w, "goprobe: %s: %s site at %#x in %s: filter operand %s: %s: its hits never pass\n", p.Def, s.Kind, s.Addr, s.Function, a.Name, a.Unavailable)
				}
			}
		}
	}
}

// isLibrary reports whether ef is a shared library (it names itself with
// DT_SONAME), whose probes fire in every process that maps it.
func isLibrary(ef *elfx.File) bool {
	if ef.Type != elf.ET_DYN {
		return false
	}
	sonames, _ := ef.DynString(elf.DT_SONAME)
	return len(sonames) > 0
}
