// Package spec is the portable form of resolved probes and of what their
// programs write: the Spec (every site of every probe, with the fetch
// chains that read its arguments there), its JSON file (WriteSpec,
// ReadSpec), the probes picked from a cached spec (Select; the cache is
// runner's ProbeCache), and the layout of the records and aggregates the
// BPF programs leave for user space, with Decode and DecodeHist to read
// them. Package probe makes specs from
// definitions and debug info; bpfprog compiles them to BPF, codegen to
// bpf-c, bpftrace and perf probe; attach loads and attaches them. It links
// no BPF library and no instruction decoder.
package spec

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/binscope/binscope/types"
)

// SpecVersion is the format version of Spec files.
const SpecVersion = 1

// Spec is a portable probe spec: made where debug info exists, used where
// it does not (a stripped production copy with the same build-id).
// Addresses are virtual addresses of the binary as linked; FileOffset is
// what a uprobe attaches at.
type Spec struct {
	Version int     `json:"version"`
	Binary  string  `json:"binary"`
	BuildID string  `json:"build_id"`
	Arch    string  `json:"arch"`
	Probes  []Probe `json:"probes"`
}

// Probe is one definition resolved: every site where it fires.
type Probe struct {
	Def      string `json:"def"`
	Function string `json:"function"`
	Lang     string `json:"lang"`
	// CaptureKey is the register whose value keys values captured at entry
	// for the return sites: the goroutine register for Go (R14 on amd64;
	// a goroutine may move between threads, and its stack may move), or ""
	// for the thread (pid_tgid).
	CaptureKey string `json:"capture_key,omitempty"`
	// Wildcard, for a probe expanded from a wildcard definition, is one
	// more than that definition's index among the run's: the probes of
	// one wildcard are attached by one link, as bpftrace attaches one.
	Wildcard int    `json:"wildcard,omitempty"`
	Sites    []Site `json:"sites"`
}

// Site kinds.
const (
	SiteEntry  = "entry"  // the out-of-line copy's entry (after the prologue for unoptimised code)
	SiteReturn = "return" // a RET instruction of the out-of-line copy
	SiteInline = "inline" // an inline expansion's entry
	SiteClone  = "clone"  // a full compiler clone's entry (.isra, .constprop)
	SiteLine   = "line"   // the first address of a source line
	SiteOffset = "offset" // FUNC+OFFSET
	SiteUSDT   = "usdt"   // a USDT probe's nop (usdt:PROVIDER:NAME)
	// SiteCapture is the entry of a function with a %return probe whose
	// arguments start from parameters: its program saves each capture
	// chain's value, keyed by goroutine (Go) or thread, for the return
	// sites, which read them as the registers "@0", "@1"...
	SiteCapture = "capture"
	// SiteClear counts nothing: past it, a call of an inline expansion
	// whose starts are marked is over, and its mark goes (see Mark).
	SiteClear = "clear"
)

// Site is one address to attach at, with how to read each argument there.
type Site struct {
	Kind       string  `json:"kind"`
	Function   string  `json:"function"` // the function whose code holds the site
	Addr       uint64  `json:"addr"`
	FileOffset uint64  `json:"file_offset"`
	Args       []Fetch `json:"args"`
	// Note, when set, says why the site is not where its kind would put
	// it (an entry site moved to where a float parameter is readable).
	Note string `json:"note,omitempty"`
	// Guard, when set, makes the site fire only on the pass of a Go
	// function's stack check that enters the body, not on the one that
	// grows the stack and starts the function again.
	Guard *Guard `json:"guard,omitempty"`
	// Mark, when set, keeps a call that passes several starts of an
	// inline expansion from counting twice (see Mark).
	Mark *Mark `json:"mark,omitempty"`
	// RefCtrOffset, when not 0, is the file offset of a USDT probe's
	// is-enabled semaphore (a uint16): the kernel adds one to it in
	// every process mapping the file while the uprobe is attached and
	// takes it back at detach (the uprobe's ref_ctr_offset), so that the
	// code guarded by it runs only then.
	RefCtrOffset uint64 `json:"ref_ctr_offset,omitempty"`
	// USDT is a USDT site's PROVIDER:NAME.
	USDT string `json:"usdt,omitempty"`
	// Filter, when set, is the predicate a hit must pass to count.
	Filter *Filter `json:"filter,omitempty"`
}

// Fetch reads one argument. Type is u8..u64, s8..s64, x8..x64, f32, f64
// (bits), "string" (a pointer and a length: Go strings, Rust &str, Zig
// slices), "cstring" (a NUL-terminated char *), "chars" (a C char[N] in
// place: Size bytes, up to the first NUL), "bytes" or "iface" (a Go
// interface: its type word, an itab or for interface{} a type, and its
// data word). Chains hold one program per part: the value; for "string"
// the pointer, then the length; for "iface" the type word, then the data.
// Unavailable, when set, says why the value cannot be read at this site;
// Fails, when set, why a hit may print ? though the chains read it here
// for other hits (a value only some callers' debug info gives). Dynamic
// names, for "iface", the dynamic types whose itabs the symbol
// table names.
type Fetch struct {
	Name        string    `json:"name"`
	Type        string    `json:"type"`
	Size        int64     `json:"size"`
	Chains      []Chain   `json:"chains,omitempty"`
	Unavailable string    `json:"unavailable,omitempty"`
	Fails       string    `json:"fails,omitempty"`
	Dynamic     []Dynamic `json:"dynamic,omitempty"`
	// Part makes this fetch part of a whole-struct argument ("struct",
	// see wholeStruct).
	Part *Part `json:"part,omitempty"`
	// Layout is a "struct" argument's type, for printing it with its
	// members' names; a spec read from a file has none (its bytes print
	// in hex).
	Layout types.Type `json:"-"`
	// Operand, at a USDT site, is the index of the probe's operand this
	// reads (argN), for generators that let the tool read it (bpftrace's
	// usdt probes).
	Operand *int `json:"operand,omitempty"`
	// Bits, for a bitfield, says which bits of the Size bytes read hold
	// it: the value is (read >> Offset) & (1<<Size - 1), sign-extended
	// for an s type.
	Bits *Bitfield `json:"bits,omitempty"`
}

// Bitfield is where a bitfield lies in the bytes a fetch reads: Offset
// bits from the least significant bit of their little-endian value, Size
// bits wide. A 3-bit field at bit 35 of its struct is read from the
// struct's byte 4 as a u8 with Bitfield{Offset: 3, Size: 3}.
type Bitfield struct {
	Offset int64 `json:"offset"`
	Size   int64 `json:"size"`
}

// Extract is the bitfield's value in v, the bytes read as a number,
// sign-extended to 64 bits when signed.
func (b Bitfield) Extract(v uint64, signed bool) uint64 {
	v = v >> uint(b.Offset) & (1<<uint(b.Size) - 1)
	if signed && b.Size < 64 && v&(1<<uint(b.Size-1)) != 0 {
		v |= ^uint64(0) << uint(b.Size)
	}
	return v
}

// Part is a fetch that belongs to a whole-struct argument: Of is that
// argument's index among the site's Args. Offset is the struct member
// whose text (a Go string's data, a C char *'s string) this fetch reads,
// or -1 for a slot that only holds more of the struct's bytes.
type Part struct {
	Of     int   `json:"of"`
	Offset int64 `json:"offset"`
}

// Dynamic is an interface's dynamic type: the address of its itab (the
// symbol go:itab.*errors.errorString,error) and the type's name.
type Dynamic struct {
	Itab uint64 `json:"itab"`
	Name string `json:"name"`
}

// Chain is a fetch program: start with register Reg's value; then for each
// offset d of Derefs, read at (value + d): 8 bytes (a pointer) for all but
// the last, Size bytes for the last. Without Derefs the value is the
// register's low Size bytes.
//
// Worked example: c->desc->fqName's length, with c in RAX, desc at +24 in
// the counter and fqName at +0 in the Desc, is {Reg: RAX, Derefs: [24, 8]}.
//
// A value the compiler turned into a constant at this site has no Reg and
// its value in Const. At a return site, Reg "@N" is the value capture
// chain N saved at the function's entry (a receiver pointer, say), so
// c->valInt at %return reads the field when the function returns, through
// the pointer it was called with.
//
// A value DWARF gives as an expression (the caller's x*3+1 passed to an
// inlined callee, a slot at a computed address) starts from Expr's value
// instead of a register: a stack machine the BPF program runs (types.Op;
// static addresses in it are the file's, relocated where the site is
// loaded). Derefs then apply as for a register.
type Chain struct {
	// Builtin, when set, is the value of a builtin instead of a register
	// (pid, tid, uid, gid, cpu, ts; comm, the thread's name, for a
	// "chars" fetch): see probe's builtins.
	Builtin string     `json:"builtin,omitempty"`
	Reg     string     `json:"reg,omitempty"`
	Field   *CtxField  `json:"field,omitempty"`
	Derefs  []int64    `json:"derefs,omitempty"`
	Const   *int64     `json:"const,omitempty"`
	Expr    []types.Op `json:"expr,omitempty"`
	// Access, when not empty, has one entry per offset of Derefs: the
	// fields that offset reaches, for programs whose offsets are relocated
	// where they load (CO-RE). An entry without Type is an offset no type
	// fixes (a stack slot), the same in every build.
	Access []Access `json:"access,omitempty"`
}

// Access is how an offset of a Chain is reached through types: from the
// start of the struct named Type (the model's name), through Fields in
// turn: member names (a Go embedded struct's name where the member is
// promoted from it) and "[N]" for element N of an array. Index, when not
// 0, first steps Index elements of Type past the pointer (p[3].x).
//
// Worked example: c->labelPairs's length, c a *counter, is the offset of
// {Type: "github.com/prometheus/client_golang/prometheus.counter",
// Fields: ["labelPairs", "len"]}: 48 in client_golang v1.11, 56 in v1.23.
type Access struct {
	Type   string   `json:"type,omitempty"`
	Index  int64    `json:"index,omitempty"`
	Fields []string `json:"fields,omitempty"`
}

// WriteSpec writes s as indented JSON.
func WriteSpec(w io.Writer, s *Spec) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(s)
}

// ReadSpec reads a spec written by WriteSpec; it refuses other versions.
func ReadSpec(r io.Reader, name string) (*Spec, error) {
	var s Spec
	dec := json.NewDecoder(r)
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: not a probe spec: %v", name, err)
	}
	if s.Version != SpecVersion {
		return nil, fmt.Errorf("%s: probe spec version %d; this goprobe reads version %d", name, s.Version, SpecVersion)
	}
	return &s, nil
}

// Guard makes a site in a Go function's stack check fire only on the pass
// that goes on into the body. The check's branch calls morestack, which
// grows the stack (or lets the scheduler preempt the goroutine: a
// preemption request sets g.stackguard0 to a value above every stack
// pointer) and then starts the function again from its first instruction:
// a call that grows its stack passes every site between the entry and the
// branch twice.
//
// The three shapes the Go compiler emits on amd64 (cmd/internal/obj/x86
// stacksplit), with framesize the frame's size and StackSmall 128:
//
//	cmp 0x10(%r14),%rsp                      framesize <= StackSmall
//	jbe morestack
//
//	lea -0x190(%rsp),%r12                    framesize < StackBig (4096)
//	cmp 0x10(%r14),%r12
//	jbe morestack
//
//	mov %rsp,%r12                            larger frames: the subtraction
//	sub $0x1f98,%r12                         may wrap, and that branches too
//	jb morestack
//	cmp 0x10(%r14),%r12
//	jbe morestack
//
// 0x10 is g.stackguard0's offset in the goroutine, which R14 holds; the
// guard takes register and offset from the CMP, and the subtracted
// amount from the LEA or SUB.
type Guard struct {
	// Flags is set at the JBE itself: the CMP has run, and the branch is
	// taken when the carry or zero flag it left is set (read from the
	// probe's saved registers: exactly what the CPU decides on, even when
	// another thread writes stackguard0 meanwhile).
	Flags bool `json:"flags,omitempty"`
	// Before the CMP, the branch will be taken when RSP < SPSub or
	// RSP - SPSub <= the 8 bytes at G + Off (unsigned). A preemption
	// request that lands between the probe and the CMP can still make
	// this pass differ from the CPU's.
	G     string `json:"g"`
	Off   int64  `json:"off"`
	SPSub int64  `json:"sp_sub,omitempty"`
}
