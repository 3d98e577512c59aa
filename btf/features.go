package btf

import (
	"fmt"
	"strings"
)

// Features are the BTF features of pahole's --btf_features that apply to
// any program, not only the kernel: which kinds and which functions and
// variables Encode writes. A nil *Features (EncodeOptions) is gopahole's
// default: every kind, consistent functions and every global variable.
type Features uint

// The features, named as pahole names them.
const (
	// EncodeForce: a C variable whose name BTF cannot hold is left out;
	// without it, such a name is an error (pahole's rule).
	EncodeForce Features = 1 << iota
	// Var: the variables of the per-CPU section .data..percpu.
	Var
	// Float: floating-point types as FLOAT; else INTs of their size.
	Float
	// DeclTag: btf_decl_tag attributes as DECL_TAGs.
	DeclTag
	// TypeTag: btf_type_tag attributes as TYPE_TAGs.
	TypeTag
	// Enum64: enums of 8 bytes as ENUM64; else, as pahole writes them
	// without it, ENUMs of 8 bytes whose values keep their low 32 bits.
	Enum64
	// OptimizedFunc: a function the compiler kept only as a clone (GCC's
	// .isra.N, .constprop.N) is encoded under its own name when the
	// clone takes the parameters the source declares.
	OptimizedFunc
	// ConsistentFunc: a name functions of different prototypes share is
	// left out.
	ConsistentFunc
	// ReproducibleBuild: the same input gives the same bytes, whatever
	// -j (always so here).
	ReproducibleBuild
	// GlobalVar: every global variable, in its section's DATASEC.
	GlobalVar
	// TrueSignature: a clone whose parameters differ from the source's
	// is encoded under its symbol's name with the parameters it takes,
	// and a static function the compiler calls otherwise than declared
	// (clang's dropped and moved parameters) under its own name with
	// the parameters it takes.
	TrueSignature
	// Attributes: decl and type tags with kind_flag 1, which carry any
	// compiler attribute (pahole writes them for the kernel's kfuncs,
	// BPF arena pointers, alone). No compiler records such attributes in
	// DWARF, so nothing more is encoded; the name is accepted, as pahole
	// accepts it.
	Attributes
)

var featureNames = []struct {
	name     string
	f        Features
	standard bool // enabled by "default"
}{
	{"encode_force", EncodeForce, true},
	{"var", Var, true},
	{"float", Float, true},
	{"decl_tag", DeclTag, true},
	{"type_tag", TypeTag, true},
	{"enum64", Enum64, true},
	{"optimized_func", OptimizedFunc, true},
	{"consistent_func", ConsistentFunc, true},
	{"reproducible_build", ReproducibleBuild, false},
	{"global_var", GlobalVar, false},
	{"true_signature", TrueSignature, false},
	{"attributes", Attributes, false},
}

// DefaultFeatures is pahole's "default" set.
func DefaultFeatures() Features {
	var f Features
	for _, n := range featureNames {
		if n.standard {
			f |= n.f
		}
	}
	return f
}

// SupportedFeatures names every feature ParseFeatures knows, comma
// separated, as pahole --supported_btf_features prints them.
func SupportedFeatures() string {
	var names []string
	for _, n := range featureNames {
		names = append(names, n.name)
	}
	return strings.Join(names, ",")
}

// Has reports whether every feature of g is in f.
func (f Features) Has(g Features) bool { return f&g == g }

// String names the features of f, comma separated.
func (f Features) String() string {
	var names []string
	for _, n := range featureNames {
		if f.Has(n.f) {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, ",")
}

// ParseFeatures reads a --btf_features list into f, as pahole does:
// "default" enables the standard features, a leading "+" adds the list
// to them, "all" enables every feature this encoder knows. A name it does
// not know is an error when strict, else it is returned in ignored (the
// kernel's features: decl_tag_kfuncs, distilled_base, layout).
func ParseFeatures(f Features, list string, strict bool) (_ Features, ignored []string, err error) {
	if rest, ok := strings.CutPrefix(list, "+"); ok {
		f |= DefaultFeatures()
		list = rest
	}
	for _, name := range strings.Split(list, ",") {
		if name == "" {
			continue
		}
		switch name {
		case "default":
			f |= DefaultFeatures()
			continue
		case "all":
			for _, n := range featureNames {
				f |= n.f
			}
			continue
		}
		found := false
		for _, n := range featureNames {
			if n.name == name {
				f |= n.f
				found = true
			}
		}
		if !found {
			if strict {
				return f, nil, fmt.Errorf("feature %q in %q is not supported; supported BTF features are: %s", name, list, SupportedFeatures())
			}
			ignored = append(ignored, name)
		}
	}
	return f, ignored, nil
}
