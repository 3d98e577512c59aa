package runner

import (
	"bytes"
	"fmt"

	cbtf "github.com/cilium/ebpf/btf"

	"github.com/binscope/binscope/btf"
	"github.com/binscope/binscope/codegen"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/usage"
	"github.com/binscope/binscope/loader"
	"github.com/binscope/binscope/spec"
)

// ObjectOptions run a CO-RE object (goprobe gen --format=bpf-c --core,
// compiled once) instead of goprobe's own programs.
type ObjectOptions struct {
	// Object is the compiled program; its probes' definitions come from it.
	Object string
	// BTF is the target's BTF (gopahole --btf_encode_detached), which the
	// object's field accesses are relocated against; "" encodes it from
	// the target's DWARF.
	BTF string
}

// objectShape reads the probes a CO-RE object was made for (its
// codegen.ShapeSection).
func objectShape(path string) (*spec.Spec, error) {
	ef, err := elfx.Open(path)
	if err != nil {
		return nil, err
	}
	defer ef.Close()
	sec := ef.Section(codegen.ShapeSection)
	if sec == nil {
		return nil, usage.Errorf("%s: no %s section: not a program of goprobe gen --format=bpf-c --core compiled with clang -target bpf", path, codegen.ShapeSection)
	}
	b, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("%s: section %s: %v", path, codegen.ShapeSection, err)
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	s, err := spec.ParseShape(b)
	if err != nil {
		return nil, fmt.Errorf("%s: section %s: %v", path, codegen.ShapeSection, err)
	}
	return s, nil
}

// objectDefs takes the probes' definitions from the object: a run of an
// object names none of its own.
func (o *ObjectOptions) objectDefs(defs []string, specFile string) (*spec.Spec, []string, error) {
	if len(defs) > 0 || specFile != "" {
		return nil, nil, usage.Errorf("--bpf-obj %s carries its probes: give no definitions and no --spec", o.Object)
	}
	shape, err := objectShape(o.Object)
	if err != nil {
		return nil, nil, err
	}
	return shape, shape.Defs(), nil
}

// check says why the object cannot serve the target's spec, or nil.
func (o *ObjectOptions) check(shape, target *spec.Spec, path string) error {
	if err := spec.SameShape(shape, target); err != nil {
		return fmt.Errorf("%s: its probes read otherwise in %s (generate it again, or for that build): %v", o.Object, path, err)
	}
	return nil
}

// targetTypes are the types the object's accesses are relocated against:
// the BTF file, or the target's DWARF encoded as gopahole -J encodes it.
func (o *ObjectOptions) targetTypes(target string) (*cbtf.Spec, error) {
	if o.BTF != "" {
		s, err := cbtf.LoadSpec(o.BTF)
		if err != nil {
			return nil, fmt.Errorf("%s: %v (want the raw BTF of gopahole --btf_encode_detached, or an ELF file with .BTF)", o.BTF, err)
		}
		return s, nil
	}
	ts, _, err := loader.Types(target, &loader.TypesOptions{Format: "dwarf"})
	if err != nil {
		return nil, fmt.Errorf("%w (or give --btf FILE, from gopahole --btf_encode_detached FILE on a build with DWARF)", err)
	}
	raw, err := btf.Encode(ts, &btf.EncodeOptions{Ident: codegen.CName})
	if err != nil {
		return nil, err
	}
	return cbtf.LoadSpecFromReader(bytes.NewReader(raw))
}
