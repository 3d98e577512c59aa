package table

import (
	"bytes"
	"strings"
	"testing"
)

// TestTable: columns two spaces apart, numbers right-aligned, long cells
// never wrapped, no trailing blanks, an empty first column indents.
func TestTable(t *testing.T) {
	var b bytes.Buffer
	tab := New(&b, Left("PROBE"), Right("COUNT"), Right("SITES"))
	long := "github.com/prometheus/client_golang/prometheus.(*counter).Add%return value=v"
	tab.Row("maybe_alloc", "10", "3")
	tab.Row(long, "1234567", "12")
	if err := tab.Flush(); err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat(" ", len(long)-len("PROBE"))
	want := "PROBE" + pad + "    COUNT  SITES\n" +
		"maybe_alloc" + strings.Repeat(" ", len(long)-len("maybe_alloc")) + "       10      3\n" +
		long + "  1234567     12\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}

	b.Reset()
	tab = New(&b, Left(""), Left(""), Left(""), Left(""))
	tab.Row("", "param", "n", "RDI")
	tab.Row("", "local", "sum", "optimized out", "ignored")
	tab.Row("", "param")
	tab.Flush()
	if want := "  param  n    RDI\n  local  sum  optimized out\n  param\n"; b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}
