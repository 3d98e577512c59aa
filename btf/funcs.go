package btf

import (
	"fmt"
	"os"

	cbtf "github.com/cilium/ebpf/btf"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/types"
)

// Funcs reads the functions of the BTF at path (raw BTF or an ELF file's
// .BTF section; split BTF as Load reads it): each FUNC with its name, its
// prototype's result and named parameters, external for global linkage,
// and its decl tags and its parameters', in the BTF's order. BTF knows no
// addresses: LowPC and Size are 0.
func Funcs(path string, opts *Options) (fns []*types.Func, err error) {
	defer func() { err = types.OneLine(err) }()
	if opts == nil {
		opts = &Options{}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, readError(path, err)
	}
	defer elfx.Catch(path, ".BTF", "BTF", &fns, &err) // cilium/ebpf decodes lazily
	s, err := decode(data, path, opts)
	if err != nil {
		return nil, err
	}
	c := &converter{memo: map[cbtf.Type]types.Type{}, void: &types.Void{}, ptr: s.ptrSize}
	for t, err := range s.cs.All() {
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %v", path, s.section, err)
		}
		f, ok := t.(*cbtf.Func)
		if !ok {
			continue
		}
		proto, ok := f.Type.(*cbtf.FuncProto)
		if !ok {
			return nil, fmt.Errorf("%s: %s: FUNC %s: prototype is a %T", path, s.section, f.Name, f.Type)
		}
		fp, ok := c.typ(proto).(*types.FuncProto)
		if !ok {
			return nil, fmt.Errorf("%s: %s: FUNC %s: prototype unreadable", path, s.section, f.Name)
		}
		fn := &types.Func{Name: f.Name, Lang: types.LangC, External: f.Linkage == cbtf.GlobalFunc, Variadic: fp.Variadic}
		if _, void := fp.Return.(*types.Void); !void {
			fn.Return = fp.Return
		}
		for _, p := range fp.Params {
			fn.Params = append(fn.Params, types.Param{Name: p.Name, Type: p.Type})
		}
		if len(f.Tags) > 0 || len(f.ParamTags) > 0 {
			fn.Tags = &types.FuncTags{Func: f.Tags, Params: f.ParamTags}
		}
		fns = append(fns, fn)
	}
	c.inferAligns()
	return fns, nil
}
