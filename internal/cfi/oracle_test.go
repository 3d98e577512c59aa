package cfi

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// An oracle is the call frame information of a file as a tool prints it:
// its FDEs per section (0 .eh_frame, 1 .debug_frame), each with the rows
// the tool interprets, in the tool's own notation.
type oracle struct {
	tool    string // "readelf" or "llvm-dwarfdump"
	machine elf.Machine
	fdes    [2][]oracleFDE
	// failed is the first error the tool reported: its rows are not to be
	// trusted (llvm-dwarfdump 14 knows neither DW_CFA_GNU_negative_offset_extended
	// nor augmentations in .debug_frame).
	failed string
}

type oracleFDE struct {
	lo, hi uint64
	rows   []oracleRow // by location, the last row of each only
	index  int         // order in the section
}

// oracleRow holds a tool's text for the CFA, the return address and the
// frame pointer; mentioned says whether the tool showed the column at all.
type oracleRow struct {
	loc      uint64
	cfa      string
	ra, fp   string
	raM, fpM bool
	all      map[string]string // readelf: every column's text
}

func (o *oracleFDE) add(r oracleRow) {
	if n := len(o.rows); n > 0 && o.rows[n-1].loc == r.loc {
		o.rows[n-1] = r
		return
	}
	o.rows = append(o.rows, r)
}

var (
	entryLine = regexp.MustCompile(`^([0-9a-f]{8,16}) [0-9a-f]+ [0-9a-f]+ (CIE|FDE)(?: cie=([0-9a-f]+) pc=([0-9a-f]+)\.\.\.?([0-9a-f]+))?`)
	llvmRow   = regexp.MustCompile(`^  0x([0-9a-f]+): CFA=(.*?)(?:: (.*))?$`)
	llvmRule  = regexp.MustCompile(`(?:^|, )([A-Z][A-Z0-9]*|reg[0-9]+)=`)
)

// sectionOf tells which section a tool's heading line starts.
func sectionOf(line string) (int, bool) {
	switch {
	case strings.Contains(line, ".eh_frame") && (strings.HasPrefix(line, "Contents of") || strings.HasSuffix(line, "contents:")):
		return 0, true
	case strings.Contains(line, ".debug_frame") && (strings.HasPrefix(line, "Contents of") || strings.HasSuffix(line, "contents:")):
		return 1, true
	}
	return -1, false
}

// readelfOracle parses readelf --debug-dump=frames-interp. readelf prints a
// column for each register an FDE (or its CIE) mentions, "u" for a rule not
// set yet or DW_CFA_undefined, and no table for an FDE without
// instructions: that FDE has its CIE's initial row.
func readelfOracle(t testing.TB, path string, m elf.Machine) *oracle {
	out := tool(t, "readelf", "--debug-dump=frames-interp", path)
	fpName, raName := "rbp", "ra"
	if m == elf.EM_AARCH64 {
		fpName = "x29"
	}
	o := &oracle{tool: "readelf", machine: m}
	sec := -1
	cieRow := map[uint64]oracleRow{}
	var cur *oracleFDE
	var curCIE uint64
	isCIE := false
	var cols []string
	finish := func() {
		if cur != nil && len(cur.rows) == 0 {
			r := cieRow[curCIE]
			r.loc = cur.lo
			cur.rows = append(cur.rows, r)
		}
		cur = nil
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if s, ok := sectionOf(line); ok {
			finish()
			sec = s
			continue
		}
		if sec < 0 {
			continue
		}
		if e := entryLine.FindStringSubmatch(line); e != nil {
			finish()
			off, _ := strconv.ParseUint(e[1], 16, 64)
			cols, isCIE = nil, e[2] == "CIE"
			if isCIE {
				curCIE = off
				continue
			}
			curCIE, _ = strconv.ParseUint(e[3], 16, 64)
			lo, _ := strconv.ParseUint(e[4], 16, 64)
			hi, _ := strconv.ParseUint(e[5], 16, 64)
			o.fdes[sec] = append(o.fdes[sec], oracleFDE{lo: lo, hi: hi, index: len(o.fdes[sec])})
			cur = &o.fdes[sec][len(o.fdes[sec])-1]
			continue
		}
		if strings.Contains(line, "ZERO terminator") {
			finish()
			cols = nil
			continue
		}
		fs := readelfFields(line)
		switch {
		case len(fs) > 0 && fs[0] == "LOC":
			cols = fs[1:]
		case cols != nil && len(fs) == len(cols)+1:
			loc, err := strconv.ParseUint(fs[0], 16, 64)
			if err != nil {
				t.Fatalf("readelf row %q", line)
			}
			r := oracleRow{loc: loc, all: map[string]string{}}
			for i, c := range cols {
				r.all[c] = fs[i+1]
				switch c {
				case "CFA":
					r.cfa = fs[i+1]
				case raName:
					r.ra, r.raM = fs[i+1], true
				case fpName:
					r.fp, r.fpM = fs[i+1], true
				}
			}
			if isCIE {
				cieRow[curCIE] = r
			} else if cur != nil {
				cur.add(r)
			}
		}
	}
	finish()
	return o
}

// readelfFields splits a row; a register rule is printed as "r9 (r9)".
func readelfFields(line string) []string {
	var fs []string
	for _, f := range strings.Fields(line) {
		if n := len(fs); n > 0 && strings.HasPrefix(f, "(") {
			fs[n-1] += " " + f
			continue
		}
		fs = append(fs, f)
	}
	return fs
}

// llvmOracle parses llvm-dwarfdump --eh-frame (which prints both
// sections): a row per location with only the registers that have a rule,
// "undefined" and "same" spelt out.
func llvmOracle(t testing.TB, path string, m elf.Machine) *oracle {
	if _, err := exec.LookPath("llvm-dwarfdump"); err != nil {
		testutil.Skipf(t, "%v", err)
	}
	var out, stderr bytes.Buffer
	cmd := exec.Command("llvm-dwarfdump", "--eh-frame", path)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	if err != nil && !bytes.Contains(stderr.Bytes(), []byte("error:")) {
		t.Fatalf("llvm-dwarfdump: %v\n%s", err, stderr.Bytes())
	}
	fpName, raName := "RBP", "RIP"
	if m == elf.EM_AARCH64 {
		fpName, raName = "W29", "W30"
	}
	o := &oracle{tool: "llvm-dwarfdump", machine: m}
	if i := strings.Index(stderr.String(), "error:"); i >= 0 {
		o.failed, _, _ = strings.Cut(stderr.String()[i:], "\n")
	}
	sec := -1
	var cur *oracleFDE
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if s, ok := sectionOf(line); ok {
			sec, cur = s, nil
			continue
		}
		if sec < 0 {
			continue
		}
		if e := entryLine.FindStringSubmatch(line); e != nil {
			cur = nil
			if e[2] == "FDE" {
				lo, _ := strconv.ParseUint(e[4], 16, 64)
				hi, _ := strconv.ParseUint(e[5], 16, 64)
				o.fdes[sec] = append(o.fdes[sec], oracleFDE{lo: lo, hi: hi, index: len(o.fdes[sec])})
				cur = &o.fdes[sec][len(o.fdes[sec])-1]
			}
			continue
		}
		mr := llvmRow.FindStringSubmatch(line)
		if mr == nil || cur == nil {
			continue
		}
		loc, _ := strconv.ParseUint(mr[1], 16, 64)
		r := oracleRow{loc: loc, cfa: mr[2]}
		rules := mr[3]
		idx := llvmRule.FindAllStringSubmatchIndex(rules, -1)
		for i, x := range idx {
			end := len(rules)
			if i+1 < len(idx) {
				end = idx[i+1][0]
			}
			name, val := rules[x[2]:x[3]], rules[x[1]:end]
			switch name {
			case raName:
				r.ra, r.raM = val, true
			case fpName:
				r.fp, r.fpM = val, true
			}
		}
		cur.add(r)
	}
	return o
}

// sweep looks an oracle's rows up at ascending addresses, keeping the FDEs
// that cover the current one: its own placement of FDEs, independent of
// the package's.
type sweep struct {
	o      *oracle
	sorted [2][]*oracleFDE
	next   [2]int
	active [2][]*oracleFDE
}

func newSweep(o *oracle) *sweep {
	s := &sweep{o: o}
	for sec := range o.fdes {
		for i := range o.fdes[sec] {
			if f := &o.fdes[sec][i]; f.hi > f.lo && f.lo != 0 {
				s.sorted[sec] = append(s.sorted[sec], f)
			}
		}
		slices.SortStableFunc(s.sorted[sec], func(a, b *oracleFDE) int {
			if a.lo != b.lo {
				return cmpU64(a.lo, b.lo)
			}
			return a.index - b.index
		})
	}
	return s
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// at returns the oracle's row for pc, which must not be below the previous
// call's: from .eh_frame's FDE covering pc if any, else .debug_frame's;
// within a section, the FDE starting lowest (then the first in the
// section).
func (s *sweep) at(pc uint64) (oracleRow, bool) {
	for sec := range s.sorted {
		for s.next[sec] < len(s.sorted[sec]) && s.sorted[sec][s.next[sec]].lo <= pc {
			s.active[sec] = append(s.active[sec], s.sorted[sec][s.next[sec]])
			s.next[sec]++
		}
		var best *oracleFDE
		kept := s.active[sec][:0]
		for _, f := range s.active[sec] {
			if f.hi <= pc {
				continue
			}
			kept = append(kept, f)
			if best == nil || f.lo < best.lo || f.lo == best.lo && f.index < best.index {
				best = f
			}
		}
		s.active[sec] = kept
		if best == nil {
			continue
		}
		i, _ := slices.BinarySearchFunc(best.rows, pc+1, func(r oracleRow, pc uint64) int { return cmpU64(r.loc, pc) })
		if i == 0 {
			return oracleRow{}, false // no row yet: the tool says nothing
		}
		return best.rows[i-1], true
	}
	return oracleRow{}, false
}

// checkpoints are the addresses where either table may change: every
// row's location, FDE bounds, and the rows of ours.
func (o *oracle) checkpoints(rows []Row) []uint64 {
	var pcs []uint64
	for sec := range o.fdes {
		for _, f := range o.fdes[sec] {
			pcs = append(pcs, f.lo, f.hi)
			for _, r := range f.rows {
				pcs = append(pcs, r.loc)
			}
		}
	}
	for _, r := range rows {
		pcs = append(pcs, r.PC)
	}
	slices.Sort(pcs)
	return slices.Compact(pcs)
}

var (
	amd64Names = []string{"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"}
	pltExpr    = regexp.MustCompile(`^DW_OP_breg7 RSP\+8, DW_OP_breg16 RIP\+0, DW_OP_lit15, DW_OP_and, DW_OP_lit(1[01]), DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus$`)
)

// regName spells DWARF register n as the tool does.
func (o *oracle) regName(n uint16) string {
	var s string
	switch {
	case o.machine == elf.EM_X86_64 && int(n) < len(amd64Names):
		s = amd64Names[n]
	case o.machine == elf.EM_AARCH64 && n < 31:
		s = fmt.Sprintf("x%d", n)
		if o.tool == "llvm-dwarfdump" {
			s = fmt.Sprintf("w%d", n) // LLVM 14 names them so
		}
	case o.machine == elf.EM_AARCH64 && n == 31:
		s = "sp"
		if o.tool == "llvm-dwarfdump" {
			s = "wsp"
		}
	default:
		return fmt.Sprintf("r%d", n)
	}
	if o.tool == "llvm-dwarfdump" {
		return strings.ToUpper(s)
	}
	return s
}

// agree reports whether our row says what the tool's does; want is the
// tool's row, ok whether the tool covers the address.
func (o *oracle) agree(r Row, covered bool, w oracleRow, ok bool) bool {
	if covered != ok {
		return false
	}
	if !ok {
		return true
	}
	return o.cfaAgrees(r.CFA, w.cfa) && o.ruleAgrees(r.RA, w.ra, w.raM) && o.ruleAgrees(r.FP, w.fp, w.fpM)
}

func (o *oracle) cfaAgrees(c CFA, s string) bool {
	if o.tool == "readelf" {
		if c.Expr {
			return s == "exp"
		}
		return s == fmt.Sprintf("%s%+d", o.regName(c.Reg), c.Offset)
	}
	// llvm-dwarfdump 14 does not bring the CFA back at
	// DW_CFA_restore_state (readelf and GCC's unwinder do): its CFA is
	// checked only for being the PLT expression.
	if m := pltExpr.FindStringSubmatch(s); m != nil {
		return c.PLT && c.Expr && c.Reg == 7 && c.Offset == 8 && strconv.Itoa(int(c.PLTFrom)) == m[1]
	}
	return !c.PLT
}

// ruleAgrees compares a register rule. A column the tool does not show
// must be SameValue (the default of a column no instruction names).
func (o *oracle) ruleAgrees(r Rule, s string, shown bool) bool {
	if !shown {
		return r.Kind == SameValue
	}
	if o.tool == "readelf" {
		switch s {
		case "u": // not set yet (the default), or DW_CFA_undefined
			return r.Kind == SameValue || r.Kind == Undefined
		case "s":
			return r.Kind == SameValue
		case "exp", "vexp":
			return r.Kind == Expression
		}
		switch r.Kind {
		case Offset:
			return s == fmt.Sprintf("c%+d", r.Offset)
		case ValOffset:
			return s == fmt.Sprintf("v%+d", r.Offset)
		case Register:
			return s == fmt.Sprintf("r%d (%s)", r.Reg, o.regName(r.Reg))
		}
		return false
	}
	switch {
	case s == "undefined":
		return r.Kind == Undefined
	case s == "same":
		return r.Kind == SameValue
	case strings.Contains(s, "DW_OP_"):
		return r.Kind == Expression
	}
	switch r.Kind {
	case Offset:
		return s == fmt.Sprintf("[CFA%+d]", r.Offset) || r.Offset == 0 && s == "[CFA]"
	case ValOffset:
		return s == fmt.Sprintf("CFA%+d", r.Offset) || r.Offset == 0 && s == "CFA"
	case Register:
		return s == o.regName(r.Reg) || s == o.regName(r.Reg)+"+0"
	}
	return false
}
