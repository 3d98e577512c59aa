package btf

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	cbtf "github.com/cilium/ebpf/btf"

	"github.com/binscope/binscope/types"
)

// LoadNamed reads only the named structs, unions, enums and typedefs whose
// names are in names (C names, with or without a "struct ", "union " or
// "enum " prefix) and what they refer to, from raw, non-split BTF such as
// the running kernel's: gopahole -C task_struct converts one type's graph,
// not the kernel's 100,000 types. ok is false, with a nil spec and error,
// when it cannot answer exactly: split BTF, an ELF file's .BTF, a name no
// type has (the caller loads everything, for suggestions), or a type
// section this index does not know.
func LoadNamed(path string, names []string, opts *Options) (spec *types.Spec, ok bool, err error) {
	if opts == nil {
		opts = &Options{}
	}
	if len(names) == 0 || opts.Base != "" || isModuleBTF(path) {
		return nil, false, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, false, readError(path, err)
	}
	if !isRawBTF(raw) {
		return nil, false, nil
	}
	want := make(map[string]bool, len(names))
	for _, n := range names {
		for _, p := range []string{"struct ", "union ", "enum "} {
			n = strings.TrimPrefix(n, p)
		}
		want[n] = true
	}
	ids, found, err := idsNamed(raw, want)
	if err != nil || found != len(want) {
		return nil, false, nil
	}
	load := func() (*cbtf.Spec, error) { return cbtf.LoadSpecFromReader(bytes.NewReader(raw)) }
	if filepath.Clean(path) == KernelBTF {
		load = cbtf.LoadKernelSpec
	}
	spec, err = convertSpec(path, load, raw, ids, kernelArch(), 8, "raw BTF", opts.Each, opts.keep())
	if err != nil {
		return nil, false, err
	}
	return spec, true, nil
}

// idsNamed lists the IDs of the named composites (see namedComposites)
// whose names want holds, and how many distinct names of want were found.
func idsNamed(raw []byte, want map[string]bool) (ids []uint32, found int, err error) {
	all, nameOffs, err := namedCompositeNames(raw)
	if err != nil {
		return nil, 0, err
	}
	sec, err := sectionsOf(raw)
	if err != nil {
		return nil, 0, err
	}
	strs := sec.strs
	seen := make(map[string]bool, len(want))
	for i, id := range all {
		off := uint64(nameOffs[i])
		if off >= uint64(len(strs)) {
			return nil, 0, errShort
		}
		name := strs[off:]
		if end := bytes.IndexByte(name, 0); end >= 0 {
			name = name[:end]
		}
		if want[string(name)] {
			ids = append(ids, id)
			seen[string(name)] = true
		}
	}
	return ids, len(seen), nil
}
