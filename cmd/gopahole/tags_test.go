package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	cbtf "github.com/cilium/ebpf/btf"
)

// tagsSrc puts clang's btf_decl_tag on a struct, a member, a typedef, a
// union, functions, a parameter and variables, and btf_type_tag on the
// pointers of a variable, a parameter and a member, two tags on one.
const tagsSrc = `#define __dt(x) __attribute__((btf_decl_tag(#x)))
#define __tt(x) __attribute__((btf_type_tag(#x)))
struct sample { int value __dt(mem_tag); struct sample __tt(rcu) *next; } __dt(struct_tag);
union u { int i; long l __dt(ul); } __dt(union_tag);
typedef int myint __dt(typedef_tag);
struct sample __tt(outer) __tt(inner) *global_ptr;
int tagged_var __dt(var_tag) = 3;
myint typed_var;
union u uvar;
__dt(a) __dt(b) __dt(c) void foo(void) {}
__dt(a) __dt(b) void bar(void) {}
void qux(int __dt(param_a) arg, struct sample __tt(user) *p) { p->value = arg; }
int main(void) { foo(); bar(); qux(1, global_ptr); return tagged_var + typed_var + uvar.i; }
`

// TestEncodeTags: the decl and type tags clang records in DWARF
// (DW_TAG_LLVM_annotation) come out of --btf_encode_detached as clang's
// own BPF target encodes the same source: every tag on the same struct,
// member, union, typedef, function, parameter and variable, and each
// pointer's chain of type tags in clang's order (inner first), from an
// object file and from a linked program alike. bpftool reads both and the
// kernel loads them.
func TestEncodeTags(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "tags.c")
	if err := os.WriteFile(src, []byte(tagsSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	oracle := filepath.Join(dir, "tags.bpf.o")
	tool(t, "clang", "-target", "bpf", "-g", "-O0", "-c", "-o", oracle, src)
	want := tagFacts(t, oracle)
	if len(want) < 10 {
		t.Fatalf("clang's BTF has only %d tag facts:\n%s", len(want), strings.Join(want, "\n"))
	}
	obj, bin := filepath.Join(dir, "tags.o"), filepath.Join(dir, "tags")
	tool(t, "clang", "-g", "-O0", "-c", "-o", obj, src)
	tool(t, "clang", "-g", "-O0", "-o", bin, src)
	// clang 14's BPF target leaves out a parameter's decl tag and a
	// member's type tag that its DWARF has: those come from DWARF's own
	// record, each tag with the kind and name of the entry it is on.
	inDWARF := dwarfTags(t, tool(t, "llvm-dwarfdump", "--debug-info", obj))
	for _, in := range []string{obj, bin} {
		out := in + ".btf"
		if code, _, errs := run("--btf_encode_detached", out, in); code != 0 {
			t.Fatalf("%s: exit %d: %s", in, code, errs)
		}
		tool(t, "bpftool", "btf", "dump", "file", out)
		loadKernel(t, out)
		got := tagFacts(t, out)
		if d := diffLines(want, got); strings.Contains(d, "\n-") || strings.HasPrefix(d, "-") {
			t.Errorf("%s: tags differ from clang -target bpf's (-clang +ours):\n%s", filepath.Base(in), d)
		}
		extra := 0
		for _, g := range got {
			if slices.Contains(want, g) {
				continue
			}
			extra++
			if !extraInDWARF(g, inDWARF) {
				t.Errorf("%s: %q is neither in clang's BTF nor in its DWARF (%v)", filepath.Base(in), g, inDWARF)
			}
		}
		if extra != 2 {
			t.Errorf("%s: %d tags beyond clang's BTF, want its 2 (param_a, rcu)", filepath.Base(in), extra)
		}
	}
}

// dwarfTags are the BTF tags llvm-dwarfdump shows in dump: "KIND TEXT on
// TAG NAME" for each DW_TAG_LLVM_annotation, with the tag and name of the
// entry it is a child of.
func dwarfTags(t *testing.T, dump string) []string {
	t.Helper()
	type die struct {
		depth     int
		tag, name string
	}
	var stack []die
	var out []string
	var annot *die
	var kind string
	for _, l := range strings.Split(dump, "\n") {
		i := strings.Index(l, "DW_TAG_")
		if strings.HasPrefix(l, "0x") && i > 0 {
			d := die{depth: i, tag: strings.Fields(l[i:])[0]}
			for len(stack) > 0 && stack[len(stack)-1].depth >= i {
				stack = stack[:len(stack)-1]
			}
			stack = append(stack, d)
			annot = nil
			if d.tag == "DW_TAG_LLVM_annotation" && len(stack) > 1 {
				annot = &stack[len(stack)-2]
			}
			continue
		}
		f := strings.Fields(l)
		if len(f) < 2 || len(stack) == 0 {
			continue
		}
		val := strings.Trim(strings.Join(f[1:], " "), "()\"")
		switch {
		case f[0] == "DW_AT_name" && annot != nil:
			kind = val
		case f[0] == "DW_AT_const_value" && annot != nil:
			out = append(out, kind+" "+val+" on "+annot.tag+" "+annot.name)
		case f[0] == "DW_AT_name":
			stack[len(stack)-1].name = val
		}
	}
	if len(out) < 10 {
		t.Fatalf("llvm-dwarfdump shows %d BTF tags:\n%s", len(out), strings.Join(out, "\n"))
	}
	return out
}

// extraInDWARF reports whether fact (tagFacts) is a decl tag DWARF has on
// a parameter or a type tag it has on a pointer.
func extraInDWARF(fact string, dwarf []string) bool {
	f := strings.Fields(fact)
	switch {
	case len(f) == 6 && f[0] == "func" && f[2] == "param" && f[4] == "decl":
		return slices.ContainsFunc(dwarf, func(d string) bool {
			return strings.HasPrefix(d, "btf_decl_tag "+f[5]+" on DW_TAG_formal_parameter ")
		})
	case len(f) >= 4 && f[2] == "type":
		for _, tag := range f[3 : len(f)-1] {
			if tag != "*" && !slices.Contains(dwarf, "btf_type_tag "+tag+" on DW_TAG_pointer_type ") {
				return false
			}
		}
		return true
	}
	return false
}

// tagFacts are the tags of the BTF at path, one line per tagged thing:
// decl tags with what they are on, and the type tags on the way from each
// variable, parameter and member to its type. Only things clang's BPF
// target encodes (no DATASEC names) are listed.
func tagFacts(t *testing.T, path string) []string {
	t.Helper()
	spec, err := cbtf.LoadSpec(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []string
	add := func(what string, tags []string) {
		if len(tags) > 0 {
			tags = slices.Clone(tags)
			slices.Sort(tags)
			out = append(out, what+" decl "+strings.Join(tags, ","))
		}
	}
	chain := func(what string, typ cbtf.Type) {
		var tags []string
		for i := 0; i < 8 && typ != nil; i++ {
			switch v := typ.(type) {
			case *cbtf.Pointer:
				typ = v.Target
				tags = append(tags, "*")
				continue
			case *cbtf.TypeTag:
				tags = append(tags, v.Value)
				typ = v.Type
				continue
			}
			break
		}
		if slices.ContainsFunc(tags, func(s string) bool { return s != "*" }) {
			out = append(out, what+" type "+strings.Join(tags, " ")+" "+typ.TypeName())
		}
	}
	for typ, err := range spec.All() {
		if err != nil {
			t.Fatal(err)
		}
		switch v := typ.(type) {
		case *cbtf.Struct:
			add("struct "+v.Name, v.Tags)
			for _, m := range v.Members {
				add("struct "+v.Name+"."+m.Name, m.Tags)
				chain("struct "+v.Name+"."+m.Name, m.Type)
			}
		case *cbtf.Union:
			add("union "+v.Name, v.Tags)
			for _, m := range v.Members {
				add("union "+v.Name+"."+m.Name, m.Tags)
			}
		case *cbtf.Typedef:
			add("typedef "+v.Name, v.Tags)
		case *cbtf.Var:
			add("var "+v.Name, v.Tags)
			chain("var "+v.Name, v.Type)
		case *cbtf.Func:
			add("func "+v.Name, v.Tags)
			proto, _ := v.Type.(*cbtf.FuncProto)
			for i, tags := range v.ParamTags {
				add(fmt.Sprintf("func %s param %d", v.Name, i), tags)
			}
			if proto != nil {
				for i, p := range proto.Params {
					chain(fmt.Sprintf("func %s param %d", v.Name, i), p.Type)
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// diffLines is the lines only in want (-) and only in got (+), or "".
func diffLines(want, got []string) string {
	var b strings.Builder
	for _, w := range want {
		if !slices.Contains(got, w) {
			b.WriteString("-" + w + "\n")
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			b.WriteString("+" + g + "\n")
		}
	}
	return b.String()
}
