package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/binscope/binscope/btf"
	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/goref"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/probe"
	"github.com/binscope/binscope/types"
)

// KernelBTF is what the tools read when no file is named, as pahole does.
const KernelBTF = "/sys/kernel/btf/vmlinux"

// loadTypes reads the types of path in the given format: "dwarf", "btf", or
// "" to choose by content (an ELF file's DWARF, else its .BTF section; a raw
// BTF file). An empty path means the running kernel's BTF; btfBase is the
// base of split BTF.
//
// names are the types asked for (-C): a Go binary without DWARF gets the
// types of their packages from a reference build (goRefTypes).
//
// each, when not nil, receives every named type as soon as it is converted,
// in the spec's order; streamed reports whether it did (the BTF loader
// streams, the DWARF loader does not).
func loadTypes(path, format, btfBase string, names []string, each func(types.Type)) (spec *types.Spec, streamed bool, err error) {
	bopts := &btf.Options{Base: btfBase, Each: each}
	loadBTF := func() (*types.Spec, bool, error) {
		spec, err := btf.Load(path, bopts)
		return spec, each != nil && err == nil, err
	}
	loadDWARF := func() (*types.Spec, bool, error) {
		spec, err := dwarf.Load(path, nil)
		return spec, false, err
	}
	if path == "" {
		path = KernelBTF
		if format == "" {
			format = "btf"
		}
	}
	switch format {
	case "dwarf":
		return loadDWARF()
	case "btf":
		return loadBTF()
	case "":
	default:
		return nil, false, usageError{fmt.Errorf("-F %q: unknown format (want dwarf or btf)", format)}
	}
	magic, err := readMagic(path)
	if err != nil {
		return nil, false, err
	}
	if btf.IsRaw(magic) {
		return loadBTF()
	}
	spec, err = dwarf.Load(path, nil)
	if err == nil || !errors.Is(err, types.ErrNoDebugInfo) {
		return spec, false, err
	}
	// No DWARF: an ELF file may still carry .BTF (a BPF object, a kernel
	// module, a binary encoded with pahole -J).
	if bspec, streamed, berr := loadBTF(); berr == nil {
		return bspec, streamed, nil
	}
	if rspec, ok, rerr := goRefTypes(path, names); ok {
		return rspec, false, rerr
	}
	return nil, false, err
}

// pathOrKernel is the file loadTypes reads for path.
func pathOrKernel(path string) string {
	if path == "" {
		return KernelBTF
	}
	return path
}

func readMagic(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory, not an ELF binary or BTF", path)
	}
	buf := make([]byte, 4)
	n, err := io.ReadFull(f, buf)
	if err != nil && n == 0 {
		return nil, fmt.Errorf("%s: empty file: not an ELF binary or BTF", path)
	}
	return buf[:n], nil
}

// Go binaries without DWARF (-ldflags='-s -w'): types and signatures from
// a reference build of the packages they were built from (package goref).
// BINSCOPE_GOREF=off turns this off.

// refLog receives what reference builds fetch and where types came from.
var refLog io.Writer = os.Stderr

func goRefOff() bool { return os.Getenv("BINSCOPE_GOREF") == "off" }

// goRefTypes loads the types named (qualified by import path) from a
// reference build when path is a Go binary without DWARF; ok is false
// when it is not one, or no name is qualified.
func goRefTypes(path string, names []string) (spec *types.Spec, ok bool, err error) {
	if goRefOff() || len(names) == 0 {
		return nil, false, nil
	}
	if _, err := goref.ReadOrigin(path); err != nil {
		return nil, false, nil
	}
	spec, ref, err := goref.Types(path, names, goref.OptionsFromEnv(refLog))
	if err != nil {
		return nil, true, err
	}
	fmt.Fprintf(refLog, "%s has no DWARF: %s\n", path, ref.Note())
	return spec, true, nil
}

// symbolResolver resolves against ef, which has no debug info. When ef
// is a Go binary and a definition reads arguments, the functions the
// definitions name get their parameters from a reference build.
func symbolResolver(ef *elfx.File, defs []*probe.Def) (*probe.Resolver, error) {
	var names []string
	for _, d := range defs {
		if d.Func != "" && readsArgs(d) {
			names = append(names, d.Func)
		}
	}
	if len(names) == 0 || goRefOff() {
		return probe.NewSymbolResolver(ef)
	}
	m, err := code.NewFromELF(ef)
	if err != nil {
		return nil, err
	}
	if !goref.Applies(m) {
		return probe.NewSymbolResolver(ef)
	}
	ref, err := goref.Attach(m, names, goref.OptionsFromEnv(refLog))
	if err != nil {
		return nil, err
	}
	if ref != nil {
		fmt.Fprintf(refLog, "goprobe: %s has no DWARF: %s\n", ef.Path, ref.Note())
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

// goRefFuncs gives the functions names denote in m, a Go binary without
// DWARF, their parameters from a reference build; false when m is not
// one.
func goRefFuncs(m *code.Model, names []string) (bool, error) {
	if goRefOff() || len(names) == 0 || !goref.Applies(m) {
		return false, nil
	}
	ref, err := goref.Attach(m, names, goref.OptionsFromEnv(refLog))
	if err != nil || ref == nil {
		return false, err
	}
	fmt.Fprintf(refLog, "%s has no DWARF: %s\n", m.Path, ref.Note())
	return true, nil
}
