package codegen

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/binscope/binscope/spec"
)

// ErrInsideFunction is returned by WriteBpftrace for a site inside a
// function of a target with a symbol table, where bpftrace 0.17 as Debian
// builds it refuses to attach (it cannot check instruction boundaries, and
// --unsafe does not lift that for a symbol's offset).
var ErrInsideFunction = errors.New("site inside a function")

// Symbol is a function symbol of the file a script attaches to, as
// bpftrace reads it from that file.
type Symbol struct {
	Name string
	Addr uint64 // virtual address
	Size uint64 // bytes; 0 when the symbol table gives none
	// Unique: no other function symbol of the file has this name, so
	// bpftrace's lookup by name finds this one.
	Unique bool
}

// BpftraceOptions tune WriteBpftrace. A nil *BpftraceOptions means the
// defaults.
type BpftraceOptions struct {
	// Target is the file to probe when it is not the one the spec was
	// made from (a stripped copy with the same build-id).
	Target string
	// FileOffsets writes file offsets instead of symbols: bpftrace takes
	// an address it cannot find in a symbol table (a stripped binary) as
	// the file offset when run with --unsafe, and then attaches anywhere,
	// inside functions too. Set it for a target without a symbol table.
	FileOffsets bool
	// Symbol, for a target with a symbol table, returns the function
	// symbol whose code holds a virtual address. Sites at a symbol's
	// first instruction attach by name (uprobe:BIN:SYMBOL); a Go entry
	// site on its stack check's branch moves to the symbol with the
	// check's guard evaluated there; return sites of other languages'
	// functions become one uretprobe per function. Any other site is
	// refused with ErrInsideFunction.
	Symbol func(addr uint64) (Symbol, bool)
	// Morestack is Go's runtime.morestack in the target, which the stack
	// check of every Go function calls (through morestack_noctxt) before
	// the function starts again: a Go function's count at its symbol
	// subtracts the passes through morestack that return into it, which
	// is exact. Nil for other binaries.
	Morestack *Symbol
	// Library: the target is a shared library, whose probes fire in every
	// process mapping it; the script counts only the command bpftrace
	// runs (pid == cpid), so it must be run with -c.
	Library bool
}

// bpftraceProbe is one probe of a script: where it attaches, the
// predicate, and a comment.
type bpftraceProbe struct {
	attach, pred, note string
	// undo, when set, is a probe (attach and predicate) on Go's
	// runtime.morestack reached from this function: each such pass starts
	// the function again, so a count there takes one call back.
	undo, undoPred string
}

// WriteBpftrace writes a bpftrace script that bpftrace 0.17 runs as its
// header says: one probe per site, so inline expansions and clones fire
// too. A probe without arguments counts its hits in @["DEF"]; a probe
// with arguments prints one line per hit. Values a uprobe cannot read are
// left out with a comment saying why.
//
// With FileOffsets (a stripped target) every site is a file offset, run
// with --unsafe. Otherwise sites attach at symbols (see
// BpftraceOptions.Symbol) and the script needs no --unsafe; a site inside
// a function is an error wrapping ErrInsideFunction that says to aim the
// script at a stripped copy.
func WriteBpftrace(w io.Writer, s *spec.Spec, opts *BpftraceOptions) error {
	r, err := regsOf(s)
	if err != nil {
		return fmt.Errorf("bpftrace: %w", err)
	}
	sc := &bpftraceScript{r: r, target: s.Binary, uret: map[string]bool{}, usdtDone: map[string]bool{}}
	if opts != nil {
		sc.o = *opts
	}
	if sc.o.Target != "" {
		sc.target = sc.o.Target
	}
	for i, p := range s.Probes {
		for _, site := range p.Sites {
			if err := sc.site(i, p, site); err != nil {
				return err
			}
		}
	}
	var b strings.Builder
	sc.header(&b, s)
	b.WriteString(sc.body.String())
	_, err = io.WriteString(w, b.String())
	return err
}

// bpftraceScript is a bpftrace script being written: a block per site,
// and the notes its header gives.
type bpftraceScript struct {
	r        regs
	o        BpftraceOptions
	target   string
	body     strings.Builder
	notes    []string
	uret     map[string]bool // uretprobes written, by probe and symbol
	usdtDone map[string]bool // usdt probes written, by probe: one covers every place
}

// site writes the block of site, of probe i p, unless another block
// already covers it.
func (sc *bpftraceScript) site(i int, p spec.Probe, site spec.Site) error {
	r, o, body := sc.r, sc.o, &sc.body
	bp, err := r.bpftraceWhere(sc.target, p, site, o)
	if err != nil {
		return err
	}
	if bp.attach == "" || site.USDT != "" && sc.usdtDone[fmt.Sprint(i, bp.attach)] {
		return nil
	}
	sc.usdtDone[fmt.Sprint(i, bp.attach)] = site.USDT != ""
	if site.USDT != "" && o.Library {
		bp.pred = joinPred(bp.pred, "pid == cpid")
	}
	if strings.HasPrefix(bp.attach, "uretprobe:") {
		if sc.uret[fmt.Sprint(i, bp.attach)] {
			return nil
		}
		sc.uret[fmt.Sprint(i, bp.attach)] = true
	}
	if bp.note != "" && !contains(sc.notes, bp.note) {
		sc.notes = append(sc.notes, bp.note)
	}
	if o.Library {
		bp.pred = joinPred(bp.pred, "pid == cpid")
	}
	if site.Filter != nil {
		pred, why := r.bpftraceFilter(site.Filter)
		if why != "" {
			return fmt.Errorf("%s: the filter at %#x: %s, which this generator cannot spell", p.Def, site.Addr, why)
		}
		for _, c := range filterChains(site.Filter) {
			if strings.HasPrefix(c.Reg, "@") {
				pred = strings.ReplaceAll(pred, fmt.Sprintf("reg(\"%s\")", r.name(c.Reg)), sc.capVar(i, p, c.Reg))
			}
		}
		bp.pred = joinPred(bp.pred, pred)
	}
	fmt.Fprintf(body, "\n// %s: %s site in %s\n%s\n", p.Def, site.Kind, site.Function, bp.attach)
	if bp.pred != "" {
		fmt.Fprintf(body, "/ %s /\n", bp.pred)
	}
	body.WriteString("{\n")
	if m := site.Mark; m != nil {
		// One call passes several starts: a mark per thread and
		// frame counts it once (see spec.Mark).
		key := fmt.Sprintf("@mark[tid, %s, %d]", r.bpftraceCFA(m), m.Group)
		if site.Kind == spec.SiteClear {
			fmt.Fprintf(body, "\tdelete(%s);\n}\n", key)
			return nil
		}
		if m.Clear {
			fmt.Fprintf(body, "\tif (%s) { delete(%s); return; }\n", key, key)
		} else {
			fmt.Fprintf(body, "\tif (%s) { return; }\n\t%s = 1;\n", key, key)
		}
	}
	switch {
	case site.Kind == spec.SiteCapture:
		for _, a := range site.Args {
			fmt.Fprintf(body, "\t%s = %s;\n", sc.capVar(i, p, a.Name), r.bpftraceChain(a.Chains[0], 8, false))
		}
		body.WriteString("}\n")
	case len(site.Args) == 0 && bp.undo != "":
		fmt.Fprintf(body, "\t@[\"%s\"] = sum(1);\n}\n", escapeString(mapKey(p.Def, i)))
		fmt.Fprintf(body, "\n// %s: morestack called from %s, which then starts again\n%s\n/ %s /\n{\n\t@[\"%s\"] = sum(-1);\n}\n",
			p.Def, site.Function, bp.undo, bp.undoPred, escapeString(mapKey(p.Def, i)))
	case len(site.Args) == 0:
		fmt.Fprintf(body, "\t@[\"%s\"] = count();\n}\n", escapeString(mapKey(p.Def, i)))
	default:
		sc.printf(i, p, site)
	}
	return nil
}

// capVar is the map that keeps value n of probe i p from its entry to its
// return: per thread, or per goroutine for Go.
func (sc *bpftraceScript) capVar(i int, p spec.Probe, n string) string {
	key := "tid"
	if p.CaptureKey != "" {
		key = fmt.Sprintf("reg(\"%s\")", sc.r.name(p.CaptureKey))
	}
	return fmt.Sprintf("@cap%d_%s[%s]", i, strings.TrimPrefix(n, "@"), key)
}

// printf writes the printf of a site's arguments, and a comment for each
// argument it cannot read, and ends the block.
func (sc *bpftraceScript) printf(i int, p spec.Probe, site spec.Site) {
	body := &sc.body
	format := []string{escape(p.Function), site.Kind}
	var vals []string
	for _, a := range site.Args {
		if f, v, ok := builtinArg(a); ok {
			format = append(format, escape(a.Name)+"="+f)
			vals = append(vals, v)
			continue
		}
		if a.Unavailable == "" {
			a.Unavailable = computed(a)
		}
		if a.Unavailable != "" {
			fmt.Fprintf(body, "\t// %s: %s\n", a.Name, a.Unavailable)
			continue
		}
		f, v := sc.r.bpftraceArg(a)
		for _, c := range a.Chains {
			if strings.HasPrefix(c.Reg, "@") {
				v = strings.ReplaceAll(v, fmt.Sprintf("reg(\"%s\")", sc.r.name(c.Reg)), sc.capVar(i, p, c.Reg))
			}
		}
		format = append(format, escape(a.Name)+"="+f)
		vals = append(vals, v)
	}
	fmt.Fprintf(body, "\tprintf(\"%s\\n\"", strings.Join(format, " "))
	for _, v := range vals {
		body.WriteString(", " + v)
	}
	body.WriteString(");\n}\n")
}

// header writes the script's first lines: how to run it, where its probes
// are, and the notes of its sites.
func (sc *bpftraceScript) header(b *strings.Builder, s *spec.Spec) {
	o := sc.o
	run := "bpftrace FILE -c CMD"
	if o.FileOffsets {
		b.WriteString("#!/usr/bin/env -S bpftrace --unsafe\n")
		run = "bpftrace --unsafe FILE -c CMD"
	} else {
		b.WriteString("#!/usr/bin/env bpftrace\n")
	}
	fmt.Fprintf(b, "// Generated by goprobe gen --format=bpftrace from %s", s.Binary)
	if s.BuildID != "" {
		fmt.Fprintf(b, " (build-id %s)", s.BuildID)
	}
	fmt.Fprintf(b, ".\n// Run: %s", run)
	if !o.Library {
		b.WriteString(" (or -p PID, or no command: every process running it)")
	}
	b.WriteString(".\n")
	if o.FileOffsets {
		fmt.Fprintf(b, "// Probes are file offsets in %s, which has no symbol table: bpftrace 0.17 attaches\n"+
			"// inside functions only there, and only with --unsafe, as it cannot check instruction\n"+
			"// boundaries itself; goprobe put every probe on one.\n", sc.target)
	} else {
		b.WriteString("// Probes are on symbols: the kernel single-steps each function's first instruction.\n")
	}
	if o.Library {
		b.WriteString("// The library's probes fire in every process that maps it: counted only in CMD (pid == cpid).\n")
	}
	for _, n := range sc.notes {
		b.WriteString("// " + strings.ReplaceAll(n, "\n", "\n// ") + "\n")
	}
}

// usdtArg spells a USDT operand as bpftrace's argN, which bpftrace reads
// at each place of the probe from the note itself.
func usdtArg(a spec.Fetch) (format, value string) {
	v := fmt.Sprintf("arg%d", *a.Operand)
	switch a.Type[0] {
	case 'c':
		return "\\\"%s\\\"", "str(" + v + ")"
	case 's':
		return "%ld", fmt.Sprintf("(int%d)%s", a.Size*8, v)
	case 'u':
		return "%lu", fmt.Sprintf("(uint%d)%s", a.Size*8, v)
	}
	return "0x%lx", v
}

// bpftraceWhere says where site attaches in target, and under which
// predicate; an empty attach means the site is covered by another probe.
func (r regs) bpftraceWhere(target string, p spec.Probe, site spec.Site, o BpftraceOptions) (bpftraceProbe, error) {
	if site.USDT != "" {
		// bpftrace's own usdt probe: every place of the probe, its
		// semaphore, and its operands as arg0...
		return bpftraceProbe{attach: "usdt:" + target + ":" + site.USDT}, nil
	}
	guard := r.bpftraceGuard(site.Guard)
	if o.FileOffsets {
		return bpftraceProbe{attach: fmt.Sprintf("uprobe:%s:%#x", target, site.FileOffset), pred: guard}, nil
	}
	if o.Symbol == nil {
		return bpftraceProbe{attach: fmt.Sprintf("uprobe:%s:%#x", target, site.Addr), pred: guard}, nil
	}
	sym, ok := o.Symbol(site.Addr)
	inside := func(why string) error {
		return fmt.Errorf("%s: %s site at %#x is inside %s (%s); bpftrace 0.17 attaches there only in a file without a symbol table: strip a copy (strip -o BIN.stripped BIN) and pass --target BIN.stripped: %w",
			p.Def, site.Kind, site.Addr, site.Function, why, ErrInsideFunction)
	}
	if !ok {
		return bpftraceProbe{}, inside("no symbol covers it")
	}
	at := bpftraceSymbol(target, sym)
	switch {
	case site.Addr == sym.Addr:
		return bpftraceProbe{attach: "uprobe:" + at, pred: guard}, nil
	case site.Guard != nil && site.Guard.Flags && (site.Kind == spec.SiteEntry || site.Kind == spec.SiteCapture) && !readsScratch(site):
		// The check's JBE: attach at the function's first instruction
		// instead and evaluate the check's comparison there, before it
		// runs. Every call passes the first instruction once, and again
		// after morestack, where the guard is false.
		if len(site.Args) == 0 && o.Morestack != nil && sym.Size > 0 {
			return bpftraceProbe{attach: "uprobe:" + at,
				undo:     "uprobe:" + bpftraceSymbol(target, *o.Morestack),
				undoPred: fmt.Sprintf("*(uint64 *)reg(\"%s\") > %#x && *(uint64 *)reg(\"%s\") <= %#x", r.name(r.a.SP), sym.Addr, r.name(r.a.SP), sym.Addr+sym.Size),
				note: "A Go function's count adds its first instruction's passes and takes back each call of\n" +
					"runtime.morestack returning into it: after morestack (a stack growth, a preemption request)\n" +
					"the function starts again from its first instruction. Exact."}, nil
		}
		g := *site.Guard
		g.Flags = false
		return bpftraceProbe{attach: "uprobe:" + at, pred: r.bpftraceGuard(&g),
			note: "A Go function's probe with arguments prints at the pass through its first instruction on\n" +
				"which its stack check will not branch to morestack (which starts the function again): the\n" +
				"guard compares the stack pointer with g.stackguard0 as the check will; a preemption request\n" +
				"that lands between the probe and the check can print one call twice."}, nil
	case site.Kind == spec.SiteReturn && p.Lang != "go":
		return bpftraceProbe{attach: "uretprobe:" + at}, nil
	case site.Kind == spec.SiteReturn:
		return bpftraceProbe{}, inside("a Go function's RET: a uretprobe would break stack growth")
	}
	return bpftraceProbe{}, inside(fmt.Sprintf("%s+%#x", sym.Name, site.Addr-sym.Addr))
}

// bpftraceSymbol spells BIN:SYMBOL, quoting names with characters outside
// bpftrace's identifiers (Go's main.(*T).M), or BIN:ADDR when bpftrace's
// lookup by name could find another symbol.
func bpftraceSymbol(target string, sym Symbol) string {
	if !sym.Unique || strings.ContainsAny(sym.Name, "\"\\") {
		return fmt.Sprintf("%s:%#x", target, sym.Addr)
	}
	for _, r := range sym.Name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Sprintf("%s:\"%s\"", target, sym.Name)
		}
	}
	return target + ":" + sym.Name
}

// readsScratch reports whether a site's arguments read a register the
// stack check writes (R12), whose value at the function's first
// instruction is not the one at the check's branch.
func readsScratch(site spec.Site) bool {
	for _, a := range site.Args {
		for _, c := range a.Chains {
			if strings.EqualFold(c.Reg, "r12") || strings.EqualFold(c.Reg, "flags") {
				return true
			}
		}
	}
	return false
}

// bpftraceCFA is the canonical frame address of a marked site (see
// spec.Mark): its register plus its offset, or 0 for the thread's mark.
func (r regs) bpftraceCFA(m *spec.Mark) string {
	if m.CFAReg == "" {
		return "0"
	}
	return fmt.Sprintf("reg(\"%s\") + %d", r.name(m.CFAReg), m.CFAOff)
}

// bpftraceGuard is the predicate of a site in a Go stack check (see
// spec.Guard): the pass that goes on into the body.
func (r regs) bpftraceGuard(g *spec.Guard) string {
	switch {
	case g == nil:
		return ""
	case g.Flags:
		return fmt.Sprintf("(reg(\"%s\") & %#x) == 0", r.name(r.a.Flags), r.a.BelowEq)
	case g.SPSub == 0:
		return fmt.Sprintf("reg(\"%s\") > *(uint64 *)(reg(\"%s\") + %d)", r.name(r.a.SP), r.name(g.G), g.Off)
	}
	sp := r.name(r.a.SP)
	return fmt.Sprintf("reg(\"%s\") >= %d && reg(\"%s\") - %d > *(uint64 *)(reg(\"%s\") + %d)", sp, g.SPSub, sp, g.SPSub, r.name(g.G), g.Off)
}

// mapKey is probe i's key in the script's count map: its definition, cut
// to what bpftrace 0.17 takes in a string literal (64 bytes) with the
// probe's number kept so that keys stay apart.
func mapKey(def string, i int) string {
	if len(def) < 64 {
		return def
	}
	tail := fmt.Sprintf("...#%d", i)
	return def[:63-len(tail)] + tail
}

func joinPred(a, b string) string {
	if a == "" {
		return b
	}
	return "(" + a + ") && " + b
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// escapeString escapes s for a bpftrace string literal that is not a
// format (a map key).
func escapeString(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}
