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
// BTF file). An empty path means the running kernel's BTF.
func loadTypes(path, format string) (*types.Spec, error) {
	if path == "" {
		path = KernelBTF
		if format == "" {
			format = "btf"
		}
	}
	switch format {
	case "dwarf":
		return dwarf.Load(path, nil)
	case "btf":
		return btf.Load(path, nil)
	case "":
	default:
		return nil, fmt.Errorf("unknown format %q (want dwarf or btf)", format)
	}
	magic, err := readMagic(path)
	if err != nil {
		return nil, err
	}
	if btf.IsRaw(magic) {
		return btf.Load(path, nil)
	}
	spec, err := dwarf.Load(path, nil)
	if err == nil || !errors.Is(err, types.ErrNoDebugInfo) {
		return spec, err
	}
	// No DWARF: an ELF file may still carry .BTF (a BPF object, a kernel
	// module, a binary encoded with pahole -J).
	if bspec, berr := btf.Load(path, nil); berr == nil {
		return bspec, nil
	}
	return nil, err
}

func readMagic(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, 4)
	n, err := io.ReadFull(f, buf)
	if err != nil && n == 0 {
		return nil, fmt.Errorf("%s: empty file: not an ELF binary or BTF", path)
	}
	return buf[:n], nil
}
