package codegen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/binscope/binscope/spec"
	"github.com/binscope/binscope/types"
)

// coreSuffix ends the name of every type a CO-RE program declares: a
// relocation matches types by the name before "___" (libbpf's and
// cilium/ebpf's "flavor" rule), so struct
// github_com_prometheus_client_golang_prometheus_counter___goprobe finds
// the target's github_com_prometheus_client_golang_prometheus_counter.
const coreSuffix = "___goprobe"

// coreTypes are the declarations a CO-RE program reads through: per
// struct at the root of an access (spec.Access), only the members the
// probes reach, nested as the model nests them, with no layout of their
// own: the loader puts each offset where the target's BTF says.
type coreTypes struct {
	byName map[string]*types.Struct // named structs reachable from the probes' types
	roots  []*coreNode
	enums  []*types.Enum
	seen   map[string]bool // enums declared
	ok     map[string]bool // accessKey of the accesses add took
}

// coreNode is a composite a program reaches into: its members in the order
// first reached, each with the node of its own members.
type coreNode struct {
	t       *types.Struct
	members []coreMember
}

type coreMember struct {
	m     types.Member
	child *coreNode // the members reached through it (a struct, or an array of structs)
}

// newCoreTypes indexes the named structs reachable from ts, through
// members, pointers, arrays and typedefs (each once).
func newCoreTypes(ts []types.Type) *coreTypes {
	c := &coreTypes{byName: map[string]*types.Struct{}, seen: map[string]bool{}}
	visited := map[types.Type]bool{}
	queue := slices.Clone(ts)
	for len(queue) > 0 && len(visited) < 1<<16 {
		t := queue[0]
		queue = queue[1:]
		if t == nil || visited[t] {
			continue
		}
		visited[t] = true
		switch v := t.(type) {
		case *types.Struct:
			if _, dup := c.byName[v.Name]; v.Name != "" && !dup && !v.Incomplete {
				c.byName[v.Name] = v
			}
			for _, m := range v.Members {
				queue = append(queue, m.Type)
			}
		case *types.Pointer:
			queue = append(queue, v.Target)
		case *types.Typedef:
			queue = append(queue, v.Target)
		case *types.Qualifier:
			queue = append(queue, v.Target)
		case *types.Array:
			queue = append(queue, v.Elem)
		}
	}
	return c
}

// add records the members a reaches; it says why not when the model
// has no such path (the access is then read at its fixed offset).
func (c *coreTypes) add(a spec.Access) error {
	s := c.byName[a.Type]
	if s == nil {
		return fmt.Errorf("no struct %s among the probes' types", a.Type)
	}
	var n *coreNode
	for _, r := range c.roots {
		if r.t == s {
			n = r
		}
	}
	if n == nil {
		n = &coreNode{t: s}
		c.roots = append(c.roots, n)
	}
	var t types.Type = s
	for _, f := range a.Fields {
		rt := types.Resolve(t)
		if strings.HasPrefix(f, "[") {
			arr, ok := rt.(*types.Array)
			if !ok {
				return fmt.Errorf("%s: %s indexes %s", a.Type, f, types.TypeString(t))
			}
			t = arr.Elem
			continue
		}
		st, ok := rt.(*types.Struct)
		if !ok {
			return fmt.Errorf("%s: .%s of %s", a.Type, f, types.TypeString(t))
		}
		if n == nil || n.t != st {
			return fmt.Errorf("%s: .%s: not a member of a struct held in place", a.Type, f)
		}
		i := slices.IndexFunc(n.members, func(cm coreMember) bool { return cm.m.Name == f })
		if i < 0 {
			k := slices.IndexFunc(st.Members, func(m types.Member) bool { return m.Name == f })
			if k < 0 {
				return fmt.Errorf("%s has no member %s", st.Name, f)
			}
			n.members = append(n.members, coreMember{m: st.Members[k]})
			i = len(n.members) - 1
		}
		t = n.members[i].m.Type
		if inner := composite(t); inner != nil {
			if n.members[i].child == nil {
				n.members[i].child = &coreNode{t: inner}
			}
			n = n.members[i].child
		} else {
			n = nil
		}
	}
	return nil
}

// composite is the struct t holds in place, through typedefs and arrays,
// or nil.
func composite(t types.Type) *types.Struct {
	for range types.MaxDepth {
		switch v := types.Resolve(t).(type) {
		case *types.Struct:
			return v
		case *types.Array:
			t = v.Elem
		default:
			return nil
		}
	}
	return nil
}

// write declares the roots, under the attribute that makes clang record
// every access to them as a relocation.
func (c *coreTypes) write(b *strings.Builder) {
	if len(c.roots) == 0 {
		return
	}
	var body strings.Builder
	for _, r := range c.roots {
		fmt.Fprintf(&body, "/* %s */\n%s %s {\n", r.t.Name, keyword(r.t), CName(r.t.Name)+coreSuffix)
		c.members(&body, r, 1)
		body.WriteString("};\n")
	}
	b.WriteString("// The members the probes read, relocated where the program loads against the target's BTF\n// (gopahole --btf_encode_detached): no offset of one build is in the program.\n")
	b.WriteString("#pragma clang attribute push (__attribute__((preserve_access_index)), apply_to = record)\n")
	for _, e := range c.enums {
		n := CName(e.Name) + coreSuffix
		fmt.Fprintf(b, "enum %s { %s__0 };\n", n, n)
	}
	b.WriteString(body.String())
	b.WriteString("#pragma clang attribute pop\n\n")
}

func (c *coreTypes) members(b *strings.Builder, n *coreNode, depth int) {
	indent := strings.Repeat("\t", depth)
	for _, cm := range n.members {
		b.WriteString(indent + c.decl(cm.m.Type, cm.child, CName(cm.m.Name), depth) + ";\n")
	}
}

// decl declares name of type t as far as a relocation checks it: the
// kind (an integer of any size matches another, any pointer another
// pointer, a struct or union another) and, for what the probes read
// into, the members they reach.
func (c *coreTypes) decl(t types.Type, child *coreNode, name string, depth int) string {
	switch v := types.Resolve(t).(type) {
	case *types.Struct:
		var b strings.Builder
		fmt.Fprintf(&b, "%s {\n", keyword(v))
		if child != nil {
			c.members(&b, child, depth+1)
		}
		b.WriteString(strings.Repeat("\t", depth) + "} " + name)
		return b.String()
	case *types.Array:
		return c.decl(v.Elem, child, name+"["+strconv.FormatInt(max(v.Count, 0), 10)+"]", depth)
	case *types.Enum:
		if !c.seen[v.Name] {
			c.seen[v.Name] = true
			c.enums = append(c.enums, v)
		}
		return "enum " + CName(v.Name) + coreSuffix + " " + name
	case *types.Base:
		switch {
		case v.Encoding == types.Float && v.ByteSize == 4:
			return "float " + name
		case v.Encoding == types.Float:
			return "double " + name
		case v.ByteSize == 16:
			return "unsigned __int128 " + name
		}
		if t, ok := map[int64]string{1: "__u8 ", 2: "__u16 ", 4: "__u32 "}[v.ByteSize]; ok {
			return t + name
		}
		return "__u64 " + name
	}
	return "void *" + name // pointers, Go func values
}

// keyword is the C keyword that declares s.
func keyword(s *types.Struct) string {
	if s.Kind == types.KindUnion {
		return "union"
	}
	return "struct"
}

// has reports whether a is an access the declarations hold (see add).
func (c *coreTypes) has(a spec.Access) bool {
	return c != nil && a.Type != "" && c.ok[accessKey(a)]
}

func accessKey(a spec.Access) string {
	return fmt.Sprintf("%s/%d/%s", a.Type, a.Index, strings.Join(a.Fields, "."))
}

// addAll records the accesses of every chain of s (see add); those the
// model cannot follow stay at their fixed offsets, which the loader then
// requires the target to share (spec.Shape), and are listed in comments.
func (c *coreTypes) addAll(b *strings.Builder, s *spec.Spec) {
	c.ok = map[string]bool{}
	for _, p := range s.Probes {
		for _, site := range p.Sites {
			for _, f := range site.Args {
				for _, ch := range f.Chains {
					for _, a := range ch.Access {
						if k := accessKey(a); a.Type != "" && !c.ok[k] {
							if err := c.add(a); err != nil {
								fmt.Fprintf(b, "// %s: at its fixed offset: %v\n", f.Name, err)
								continue
							}
							c.ok[k] = true
						}
					}
				}
			}
		}
	}
}

// addr is the address a typed access reaches from base, an expression of
// the address of the access's root struct.
func (c *coreTypes) addr(a spec.Access, base string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "(__u64)&((%s %s *)(%s))[%d]", keyword(c.byName[a.Type]), CName(a.Type)+coreSuffix, base, a.Index)
	for _, f := range a.Fields {
		if strings.HasPrefix(f, "[") {
			b.WriteString(f)
			continue
		}
		b.WriteString("." + CName(f))
	}
	return b.String()
}

// ShapeSection is the section of a CO-RE object that holds its probes'
// shape (spec.Shape), NUL-terminated.
const ShapeSection = ".goprobe.shape"

// writeCORE declares the fields s's probes read, as relocations (see
// BPFCOptions.CORE), and the shape the loader checks.
func (r *bpfc) writeCORE(b *strings.Builder, s *spec.Spec, ts []types.Type) error {
	r.core = newCoreTypes(ts)
	r.core.addAll(b, s)
	r.core.write(b)
	shape, err := spec.Shape(s)
	if err != nil {
		return err
	}
	b.WriteString("// The probes as goprobe trace --bpf-obj checks them against the target's: definitions, sites,\n// registers and fields, without the offsets the loader relocates.\n")
	fmt.Fprintf(b, "const char goprobe_shape[] __attribute__((used)) SEC(%q) =", ShapeSection)
	for len(shape) > 0 {
		n := min(len(shape), 100)
		b.WriteString("\n\t\"" + cString(shape[:n]) + "\"")
		shape = shape[n:]
	}
	b.WriteString(";\n\n")
	return nil
}

// cString escapes text for a C string literal.
func cString(text []byte) string {
	var b strings.Builder
	for _, c := range text {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f || c == '?':
			fmt.Fprintf(&b, "\\%03o", c) // '?': no trigraphs
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
