package flame

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/binscope/binscope/stack"
)

// ErrSyntax is wrapped by ReadFolded's errors for a line that is not
// "frame;frame;... count".
var ErrSyntax = errors.New("not a folded stack")

// maxFoldedLine bounds one folded line (a stack of thousands of long C++
// names fits many times over).
const maxFoldedLine = 64 << 20

// appendFolded appends f's name in the folded format: a ';' becomes ':'
// and line breaks and tabs become spaces (as cleanName does), "_[k]" marks
// a kernel frame and "_[i]" an inline expansion.
func appendFolded(b []byte, f *stack.Frame) []byte {
	name := f.Name
	for {
		i := 0
		for i < len(name) && !foldedSpecial[name[i]] {
			i++
		}
		b = append(b, name[:i]...)
		if i == len(name) {
			break
		}
		if name[i] == ';' {
			b = append(b, ':')
		} else {
			b = append(b, ' ')
		}
		name = name[i+1:]
	}
	switch {
	case f.Kernel:
		b = append(b, kernelSuffix...)
	case f.Inlined:
		b = append(b, inlineSuffix...)
	}
	return b
}

// foldedSpecial marks the bytes appendFolded replaces.
var foldedSpecial = [256]bool{';': true, '\n': true, '\r': true, '\t': true}

// WriteFolded writes stacks in the folded format, one line per distinct
// stack, root first, with its samples after the last space:
//
//	main;main.outer;main.inner 123
//	main;runtime.mallocgc;do_syscall_64_[k] 7
//
// Identical stacks are merged and lines are sorted (byte order). Kernel
// frames get the suffix "_[k]", inline expansions "_[i]"; a ';' in a name
// becomes ':' and line breaks and tabs become spaces, so the output always
// parses. Modules and languages are not part of the format. Stacks with no
// frames or no samples are left out.
func WriteFolded(w io.Writer, stacks []stack.Stack) error {
	// Every stack's text in one buffer, sized in a first pass.
	size := 0
	for i := range stacks {
		if s := &stacks[i]; s.Count > 0 {
			for j := range s.Frames {
				size += len(s.Frames[j].Name) + len(kernelSuffix) + 1
			}
		}
	}
	type line struct {
		start, end int
		count      uint64
	}
	text := make([]byte, 0, size)
	lines := make([]line, 0, len(stacks))
	for i := range stacks {
		s := &stacks[i]
		if len(s.Frames) == 0 || s.Count == 0 {
			continue
		}
		start := len(text)
		for j := range s.Frames {
			if j > 0 {
				text = append(text, ';')
			}
			text = appendFolded(text, &s.Frames[j])
		}
		lines = append(lines, line{start, len(text), s.Count})
	}
	str := func(l line) []byte { return text[l.start:l.end] }
	slices.SortFunc(lines, func(a, b line) int { return bytes.Compare(str(a), str(b)) })

	bw := bufio.NewWriterSize(w, 64<<10)
	var num []byte
	for i := 0; i < len(lines); {
		l := lines[i]
		n := l.count
		for i++; i < len(lines) && bytes.Equal(str(lines[i]), str(l)); i++ {
			n += lines[i].count
		}
		bw.Write(str(l))
		num = append(num[:0], ' ')
		num = strconv.AppendUint(num, n, 10)
		num = append(num, '\n')
		if _, err := bw.Write(num); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ReadFolded parses the folded format: what WriteFolded writes, and what
// the usual collapsers make of perf script, DTrace or bpftrace output.
// Each non-blank line is frames separated by ';', root first, then
// whitespace and a decimal sample count. Duplicate stacks are merged; the
// result keeps the order in which stacks first appear. A "_[k]" suffix
// makes a Kernel frame of module "[kernel]", "_[i]" an Inlined one (both
// suffixes are removed); other frames have no module and LangUnknown.
//
// A malformed line is an error wrapping ErrSyntax and naming the line.
func ReadFolded(r io.Reader) ([]stack.Stack, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxFoldedLine)
	index := map[string]int{}     // stack text → its Stack
	intern := map[string]string{} // frame text → one shared copy
	var out []stack.Stack
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), " \t\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		i := strings.LastIndexAny(text, " \t")
		if i < 0 {
			return nil, fmt.Errorf("folded line %d: %w: no sample count after the stack", line, ErrSyntax)
		}
		count, err := strconv.ParseUint(text[i+1:], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("folded line %d: %w: sample count %q is not a whole number", line, ErrSyntax, text[i+1:])
		}
		key := strings.TrimRight(text[:i], " \t")
		if key == "" {
			return nil, fmt.Errorf("folded line %d: %w: no frames before the count", line, ErrSyntax)
		}
		if j, ok := index[key]; ok {
			out[j].Count += count
			continue
		}
		key = strings.Clone(key) // the scanner reuses its buffer
		frames := make([]stack.Frame, 0, strings.Count(key, ";")+1)
		for part := range strings.SplitSeq(key, ";") {
			name, ok := intern[part]
			if !ok {
				name = part
				intern[name] = name
			}
			frames = append(frames, parseFoldedName(name))
		}
		index[key] = len(out)
		out = append(out, stack.Stack{Frames: frames, Count: count})
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("folded line %d: %w: longer than %d bytes", line+1, ErrSyntax, maxFoldedLine)
		}
		return nil, err
	}
	return out, nil
}

// parseFoldedName turns one frame of a folded line into a Frame, reading
// the collapsers' kernel and inline annotations.
func parseFoldedName(s string) stack.Frame {
	if n, ok := strings.CutSuffix(s, kernelSuffix); ok {
		return stack.Frame{Name: n, Module: kernelModule, Kernel: true}
	}
	if n, ok := strings.CutSuffix(s, inlineSuffix); ok {
		return stack.Frame{Name: n, Inlined: true}
	}
	return stack.Frame{Name: s}
}
