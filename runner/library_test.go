package runner

import "testing"

// TestCutLibrary: a LIB: prefix is a shared object's name, its "lib"
// stem or a path; a function's line, a C++ scope or a USDT probe is not.
func TestCutLibrary(t *testing.T) {
	for def, want := range map[string]string{
		"libc.so.6:malloc size": "libc.so.6",
		"libc:fread":            "libc",
		"libstdc++:__cxa_throw": "libstdc++",
		"/lib/x.so:f":           "/lib/x.so",
		"libfoo:12":             "",
		"library::get":          "",
		"lib:f":                 "",
		"main.go:12":            "",
		"usdt:libc:setjmp":      "",
		"ns::libx:f":            "",
	} {
		lib, _, ok := cutLibrary(def)
		if lib != want || ok != (want != "") {
			t.Errorf("%q: library %q (%v), want %q", def, lib, ok, want)
		}
	}
}
