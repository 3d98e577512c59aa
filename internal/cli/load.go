package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/binscope/binscope/btf"
	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/types"
)

// KernelBTF is what the tools read when no file is named, as pahole does.
const KernelBTF = "/sys/kernel/btf/vmlinux"

// loadTypes reads the types of path in the given format: "dwarf", "btf", or
// "" to choose by content (an ELF file's DWARF, else its .BTF section; a raw
// BTF file). An empty path means the running kernel's BTF; btfBase is the
// base of split BTF.
//
// each, when not nil, receives every named type as soon as it is converted,
// in the spec's order; streamed reports whether it did (the BTF loader
// streams, the DWARF loader does not).
func loadTypes(path, format, btfBase string, each func(types.Type)) (spec *types.Spec, streamed bool, err error) {
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
