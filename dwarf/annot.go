package dwarf

import (
	"github.com/binscope/binscope/types"
)

// tagLLVMAnnotation is DW_TAG_LLVM_annotation: clang's record of a
// btf_decl_tag("...") or btf_type_tag("...") attribute, a child of the
// DIE it annotates, named by DW_AT_name ("btf_decl_tag", "btf_type_tag")
// with the tag's text in DW_AT_const_value.
const tagLLVMAnnotation Tag = 0x6000

// The DW_AT_name of an annotation that is a BTF tag.
const (
	annotDeclTag = "btf_decl_tag"
	annotTypeTag = "btf_type_tag"
)

// annotation is the kind and text of e when it is a BTF tag annotation.
func annotation(e *Entry) (kind, text string, ok bool) {
	if e.Tag != tagLLVMAnnotation {
		return "", "", false
	}
	text, ok = e.Str(AttrConstValue)
	return e.Name(), text, ok
}

// annotations are the texts of the annotations of kind among n's
// children, in DIE order (the source's).
func annotations(n *node, kind string) ([]string, error) {
	var out []string
	for _, k := range n.kids {
		if k.tag != tagLLVMAnnotation {
			continue
		}
		e, err := k.entry()
		if err != nil {
			return nil, err
		}
		if kd, text, ok := annotation(e); ok && kd == kind {
			out = append(out, text)
		}
	}
	return out, nil
}

// typeTagged is target behind the type tags of n, a pointer: clang lists
// `struct s __tag(outer) __tag(inner) *p`'s in the source's order, and
// the tag nearest the '*' qualifies the pointee first, as BTF chains them
// (PTR -> TYPE_TAG inner -> TYPE_TAG outer -> STRUCT s) and pahole and
// clang's BPF target encode them.
func typeTagged(n *node, target types.Type) (types.Type, error) {
	tags, err := annotations(n, annotTypeTag)
	for _, t := range tags {
		target = &types.Qualifier{Kind: types.TypeTag, Tag: t, Target: target}
	}
	return target, err
}
