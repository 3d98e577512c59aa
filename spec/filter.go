package spec

// Filter is a site's predicate, evaluated in its BPF program before the
// hit counts: a hit whose filter is false (or cannot be evaluated: an
// operand unavailable at the site, a read that faults, a division by
// zero) is not counted, recorded or keyed. Operands are read at the site
// as arguments are; Code is the predicate in postfix order.
//
// Worked example: /x > 3 && $pid == 1234/ has the operands x and $pid and
// the code [arg 0] [num 3] [>] [arg 1] [num 1234] [==] [&&].
type Filter struct {
	Text     string     `json:"text"`
	Operands []Fetch    `json:"operands"`
	Code     []FilterOp `json:"code"`
}

// FilterOp is one operation of a filter's postfix code.
//
//	num            push Value (a signed 64-bit number)
//	arg            push operand Arg, widened from its size by its type's
//	               sign (s: signed; u, x: unsigned), a bitfield extracted
//	streq          push 1 when operand Arg's text (a C char * or char[N],
//	               a Go string, $comm) is Text, else 0
//	neg ~ !        replace the top with -v, ^v, v == 0
//	+ - * / % & | ^ << >> == != < <= > >= && ||
//	               replace the two top values (left below right) by the
//	               result; unsigned when either side is, as C's 64-bit
//	               arithmetic; comparisons and logic give 0 or 1
type FilterOp struct {
	Op    string `json:"op"`
	Value int64  `json:"value,omitempty"`
	Arg   int    `json:"arg,omitempty"`
	Text  string `json:"text,omitempty"`
}

// FilterTextMax is the longest literal a filter compares text with: a C
// string is read with its NUL into StringMax bytes, and one longer than
// the literal must read longer.
const FilterTextMax = 62
