// Package flame prints sampled or counted stacks: Brendan Gregg's folded
// format, a self-contained interactive SVG flame graph, and a table of the
// functions with the most samples.
package flame

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/binscope/binscope/types"
)

// Frame is one function on a stack.
type Frame struct {
	// Name is the symbolized (demangled) name, or "module+0x1234" where
	// no symbol covers the address.
	Name string
	// Module is the file's base name ("app", "libc.so.6"), "[kernel]".
	Module string
	Lang   types.Lang
	// Inlined is an inline expansion at the same address as the frame
	// before it.
	Inlined bool
	Kernel  bool
}

// Stack is a distinct stack, outermost frame first, and how many samples
// or hits carried it.
type Stack struct {
	Frames []Frame
	Count  uint64
}

// Folded-format annotations, as the usual stack collapsers write them.
const (
	kernelSuffix = "_[k]"
	inlineSuffix = "_[i]"
)

// foldedName is a frame's name in the folded format: ';' separates frames
// and the last ' ' the count, so names keep neither.
func foldedName(f Frame) string {
	n := strings.NewReplacer(";", ":", "\n", " ").Replace(f.Name)
	switch {
	case f.Kernel:
		n += kernelSuffix
	case f.Inlined:
		n += inlineSuffix
	}
	return n
}

// WriteFolded writes one line per distinct stack, "main;outer;inner 123",
// sorted, identical stacks merged.
func WriteFolded(w io.Writer, stacks []Stack) error {
	counts := map[string]uint64{}
	for _, s := range stacks {
		names := make([]string, len(s.Frames))
		for i, f := range s.Frames {
			names[i] = foldedName(f)
		}
		counts[strings.Join(names, ";")] += s.Count
	}
	lines := make([]string, 0, len(counts))
	for k := range counts {
		lines = append(lines, k)
	}
	sort.Strings(lines)
	bw := bufio.NewWriter(w)
	for _, l := range lines {
		bw.WriteString(l)
		bw.WriteByte(' ')
		bw.WriteString(strconv.FormatUint(counts[l], 10))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// ReadFolded parses folded stacks (what WriteFolded and the usual stack
// collapsers write), merging duplicates; frames keep their _[k] and _[i]
// annotations as Kernel and Inlined.
func ReadFolded(r io.Reader) ([]Stack, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	index := map[string]int{}
	var out []Stack
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			return nil, fmt.Errorf("folded line %d: no count", n)
		}
		c, err := strconv.ParseUint(line[i+1:], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("folded line %d: count %q", n, line[i+1:])
		}
		key := line[:i]
		if j, ok := index[key]; ok {
			out[j].Count += c
			continue
		}
		var frames []Frame
		for _, name := range strings.Split(key, ";") {
			f := Frame{Name: name}
			if s, ok := strings.CutSuffix(name, kernelSuffix); ok {
				f.Name, f.Kernel, f.Module = s, true, "[kernel]"
			} else if s, ok := strings.CutSuffix(name, inlineSuffix); ok {
				f.Name, f.Inlined = s, true
			}
			frames = append(frames, f)
		}
		index[key] = len(out)
		out = append(out, Stack{Frames: frames, Count: c})
	}
	return out, sc.Err()
}

// TopRow is one function's samples: Self where it was the innermost frame,
// Total where it was on the stack (once per stack, however often it
// recurses).
type TopRow struct {
	Name, Module string
	Self, Total  uint64
}

// Top returns the n functions with the most self samples (then total),
// counting inline expansions as the functions they are.
func Top(stacks []Stack, n int) []TopRow {
	type key struct{ name, module string }
	rows := map[key]*TopRow{}
	get := func(f Frame) *TopRow {
		k := key{f.Name, f.Module}
		r := rows[k]
		if r == nil {
			r = &TopRow{Name: f.Name, Module: f.Module}
			rows[k] = r
		}
		return r
	}
	for _, s := range stacks {
		if len(s.Frames) == 0 {
			continue
		}
		seen := map[key]bool{}
		for _, f := range s.Frames {
			k := key{f.Name, f.Module}
			if !seen[k] {
				seen[k] = true
				get(f).Total += s.Count
			}
		}
		get(s.Frames[len(s.Frames)-1]).Self += s.Count
	}
	out := make([]TopRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Self != b.Self {
			return a.Self > b.Self
		}
		if a.Total != b.Total {
			return a.Total > b.Total
		}
		return a.Name < b.Name
	})
	if n >= 0 && len(out) > n {
		out = out[:n]
	}
	return out
}

// WriteTop prints rows as a table with each count's share of samples.
func WriteTop(w io.Writer, rows []TopRow, samples uint64) error {
	pct := func(v uint64) float64 {
		if samples == 0 {
			return 0
		}
		return 100 * float64(v) / float64(samples)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%7s %9s %7s %9s  %s\n", "SELF%", "SELF", "TOTAL%", "TOTAL", "FUNCTION")
	for _, r := range rows {
		name := r.Name
		if r.Module != "" {
			name += " [" + r.Module + "]"
		}
		fmt.Fprintf(bw, "%6.2f%% %9d %6.2f%% %9d  %s\n", pct(r.Self), r.Self, pct(r.Total), r.Total, name)
	}
	return bw.Flush()
}
