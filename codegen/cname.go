// Package codegen turns the model into artifacts other tools compile or
// run. WriteHeader writes a self-contained C header for chosen types of any
// language, their dependencies first, with a _Static_assert for every size
// and member offset so that the C compiler checks the layout each time the
// header is compiled; CName maps any language's names to C identifiers. From
// a probe spec, WriteBPFC writes a libbpf-style BPF program in C,
// WriteBpftrace a bpftrace script and WritePerf perf probe commands, with
// registers named from internal/arch's table.
package codegen

import (
	"strconv"
	"strings"
)

// CName maps a type name of any language to a C identifier. The mapping
// is documented and close to reversible:
//
//	"::"                        -> "__"   (layouts::Holey -> layouts__Holey)
//	any other byte outside [A-Za-z0-9_] -> "_"
//	                                      (github.com/x/y.T -> github_com_x_y_T,
//	                                       main.Pair[int,string] -> main_Pair_int_string_,
//	                                       layouts::Generic<u32> -> layouts__Generic_u32_)
//	a leading digit gets "_"; a C keyword, a compiler builtin name
//	(__builtin_va_list) or a predefined identifier (__func__) a trailing "_".
//
// Two names that map to the same identifier are told apart by the header
// writer with a "_2", "_3" suffix; every emitted type carries its original
// name in a comment.
func CName(name string) string {
	if plainIdent(name) {
		return name // most names: no copy
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == ':' && i+1 < len(name) && name[i+1] == ':':
			b.WriteString("__")
			i++
		case identByte(c):
			b.WriteByte(c)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" {
		return "_"
	}
	if s[0] >= '0' && s[0] <= '9' {
		s = "_" + s
	}
	if reserved(s) {
		s += "_"
	}
	return s
}

func identByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// plainIdent reports whether CName maps name to itself.
func plainIdent(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !identByte(name[i]) {
			return false
		}
	}
	return !reserved(name)
}

// reserved reports whether s is an identifier the header may not declare: a
// C keyword (C23's included), a GNU or clang keyword, a compiler builtin
// (__builtin_va_list), or a predefined identifier or macro, which all have
// the shape __x__ (__func__, __FUNCTION__, __LINE__, __BPF__).
func reserved(s string) bool {
	if s == "" || s[0] != '_' { // most names: at most a keyword
		return len(s) <= maxKeyword && kwLens[s[0]]&(1<<len(s)) != 0 && cKeywords[s]
	}
	return cKeywords[s] || strings.HasPrefix(s, "__builtin") ||
		len(s) > 4 && strings.HasPrefix(s, "__") && strings.HasSuffix(s, "__")
}

// kwLens has bit n of entry c set when a keyword of cKeywords is n bytes
// long and starts with c: most names need no lookup.
var kwLens = func() (lens [256]uint64) {
	for k := range cKeywords {
		lens[k[0]] |= 1 << len(k)
	}
	return lens
}()

// maxKeyword is the length of the longest of cKeywords.
var maxKeyword = func() int {
	n := 0
	for k := range cKeywords {
		n = max(n, len(k))
	}
	return n
}()

// cKeywords are C's reserved words and the builtin type spellings the
// header uses, which no generated identifier may take.
var cKeywords = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range strings.Fields(`auto break case char const continue default do double else enum extern
		float for goto if inline int long register restrict return short signed sizeof static struct switch
		typedef union unsigned void volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic
		_Imaginary _Noreturn _Static_assert _Thread_local asm typeof __int128 bool true false
		alignas alignof constexpr nullptr static_assert thread_local typeof_unqual _BitInt _Decimal32
		_Decimal64 _Decimal128 _Float16 _Float32 _Float64 _Float128 __fp16 __bf16 __float128 __ibm128
		__int128_t __uint128_t __asm __inline __restrict __signed __const __volatile __typeof __real
		__imag __complex __thread __auto_type __alignof __attribute __extension __label _LP64`) {
		m[k] = true
	}
	return m
}()

// namer hands out unique C identifiers in one namespace: a header asks for
// each type's tag or name once (two different structs may share a name, as
// the kernel's two syscall_tp_t do; the second is syscall_tp_t_2). Its map
// is made on first use: a header makes one namer per struct body, most of
// them small.
type namer struct {
	taken map[string]bool // C identifiers handed out
	// few holds the first identifiers handed out, before taken does: a
	// struct's member names, searched faster than hashed.
	few  [fewNames]string
	nfew int
}

const fewNames = 16

func newNamer() *namer { return &namer{} }

// newNamerSized is a namer for about n identifiers.
func newNamerSized(n int) *namer { return &namer{taken: make(map[string]bool, n)} }

// unique returns a fresh identifier made from original each time it is
// called (member names, padding).
func (n *namer) unique(original string) string {
	return n.fresh(CName(original))
}

// fresh takes base, or base_2, base_3... when base is taken.
func (n *namer) fresh(base string) string {
	id := base
	for i := 2; n.has(id); i++ {
		id = base + "_" + strconv.Itoa(i)
	}
	if n.taken == nil && n.nfew < fewNames {
		n.few[n.nfew] = id
		n.nfew++
		return id
	}
	if n.taken == nil {
		n.taken = make(map[string]bool, 2*fewNames)
		for _, f := range n.few[:n.nfew] {
			n.taken[f] = true
		}
	}
	n.taken[id] = true
	return id
}

func (n *namer) has(id string) bool {
	if n.taken != nil {
		return n.taken[id]
	}
	for _, f := range n.few[:n.nfew] {
		if f == id {
			return true
		}
	}
	return false
}

// cnameAgain is CName(c) of c made by CName, as member names have always
// been mapped (twice): a reserved name gets a second "_" (__dict__ ->
// __dict____).
func cnameAgain(c string) string {
	if reserved(c) {
		return c + "_"
	}
	return c
}

// fieldName makes a member name C-legal: Rust's r#type and names that are
// C keywords get the same mapping as types.
func fieldName(name string) string {
	return CName(strings.TrimPrefix(name, "r#"))
}

// memberName is cnameAgain(fieldName(name)), as members are named.
func memberName(name string) string {
	if plainIdent(name) { // most names: neither changed nor reserved
		return name
	}
	return cnameAgain(fieldName(name))
}
