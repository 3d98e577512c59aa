package probe

import "testing"

// TestParseSpacedNames: names printed with spaces inside their brackets
// (C++ and Rust template arguments, Go's shape types) are one probe point;
// the arguments after them are still arguments.
func TestParseSpacedNames(t *testing.T) {
	for text, want := range map[string]struct {
		fn   string
		args int
		ret  bool
	}{
		"real::total<int, long>":                                         {"real::total<int, long>", 0, false},
		"real::total<int, long>%return $retval":                          {"real::total<int, long>", 1, true},
		"real::checksum<&alloc::string::String> data":                    {"real::checksum<&alloc::string::String>", 1, false},
		"os.init.OnceValue[go.shape.interface { Error() string }].func2": {"os.init.OnceValue[go.shape.interface { Error() string }].func2", 0, false},
		"main.work k":   {"main.work", 1, false},
		"f a[1] b":      {"f", 2, false},
		"operator< a b": {"operator<", 2, false},
	} {
		d, err := Parse(text)
		if err != nil {
			t.Errorf("%q: %v", text, err)
			continue
		}
		if d.Func != want.fn || len(d.Args) != want.args || d.Return != want.ret {
			t.Errorf("%q: func %q, %d args, return %v; want %+v", text, d.Func, len(d.Args), d.Return, want)
		}
	}
}
