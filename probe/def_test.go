package probe

import (
	"strings"
	"testing"
)

// TestParse: each form of the syntax gives the fields it names.
func TestParse(t *testing.T) {
	d, err := Parse("github.com/x/p.(*counter).Add%return v=c->desc->fqName:string n[2].len $retval")
	if err != nil {
		t.Fatal(err)
	}
	if d.Func != "github.com/x/p.(*counter).Add" || !d.Return || len(d.Args) != 3 ||
		d.Args[0].Name != "v" || d.Args[0].Base != "c" || d.Args[0].Type != "string" || len(d.Args[0].Path) != 2 ||
		d.Args[1].Path[0].Kind != Index || d.Args[1].Path[0].Index != 2 || d.Args[1].Path[1].Name != "len" {
		t.Errorf("%+v", d)
	}
	for text, want := range map[string]string{
		"layouts::inner::work:12": "layouts::inner::work",
		"main.work+0x10":          "main.work",
		"ns::C<int>::f":           "ns::C<int>::f",
	} {
		d, err := Parse(text)
		if err != nil || d.Func != want {
			t.Errorf("%q: %+v %v", text, d, err)
		}
	}
	// A quoted name is the function's whole name, ':' and '+' included.
	for text, want := range map[string]Def{
		`"a::b+c"`:         {Func: "a::b+c"},
		`"echo_builtin"+8`: {Func: "echo_builtin", Offset: 8},
		`"f:12"%return`:    {Func: "f:12", Return: true},
	} {
		d, err := Parse(text)
		if err != nil || d.Func != want.Func || d.Offset != want.Offset || d.Return != want.Return || d.Line != 0 {
			t.Errorf("%s: %+v %v", text, d, err)
		}
	}
	if d, _ := Parse("src/main.go:42"); d == nil || d.File != "src/main.go" || d.Line != 42 {
		t.Errorf("FILE:LINE: %+v", d)
	}
	for _, bad := range []string{"", "f:0", "f:x", "f+zz", "f a:u7", "f .x", "f a[", "f%return:3", "f a->", `"f`, `""`, `"f"x`, `"f":3`} {
		if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), "bad probe definition") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// FuzzParse: any text parses into a definition that names a function, a
// source file or a raw address, or fails with an error; never a panic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"main.work k", "f%return $retval", "a::b:3 x->y[1].z:u8", "f+0x10 %ax", "f n=a.b:string", "0X1", "bin:0x0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Parse(s)
		if err == nil && d.Func == "" && d.File == "" && d.Addr == 0 {
			t.Fatalf("%q: no function, file or address, and no error", s)
		}
	})
}
