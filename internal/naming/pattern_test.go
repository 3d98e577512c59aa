package naming

import (
	"strings"
	"testing"
)

func TestPattern(t *testing.T) {
	cases := []struct {
		pat, name string
		want      bool
	}{
		{"main.*", "main.main", true},
		{"main.*", "main.(*acc).add", true},
		{"main.*", "mainx.f", false},
		{"main.(*acc).*", "main.(*acc).add", true},
		{"main.(*acc).*", "main.(*accX).add", false}, // (* is Go's receiver
		{"main.(*acc).*", "main.(acc).add", false},
		{"ns::Tmpl<*>::get", "ns::Tmpl<int>::get", true},
		{"ns::Tmpl<*>::get", "ns::Tmpl<std::pair<int, long> >::get", true},
		{"ns::Tmpl<*>::get", "ns::Tmpl<int>::set", false},
		{"*alloc*", "maybe_alloc", true},
		{"*alloc*", "__libc_malloc", true},
		{"*alloc*", "free", false},
		{"f?", "f1", true},
		{"f?", "f12", false},
		{`a\*b`, "a*b", true},
		{`a\*b`, "axb", false},
		{"main.Pair[*].get", "main.Pair[int,string].get", true},
		{"function__*", "function__entry", true},
		{"plain", "plain", true},
		{"plain", "plainer", false},
	}
	for _, c := range cases {
		if got := NewPattern(c.pat).Match(c.name); got != c.want {
			t.Errorf("%q matches %q: %v, want %v", c.pat, c.name, got, c.want)
		}
	}
	for s, want := range map[string]bool{"main.(*T).M": false, "main.*": true, "f?": true, `a\*`: false, "operator*": true} {
		if IsPattern(s) != want {
			t.Errorf("IsPattern(%q) = %v", s, !want)
		}
	}
}

func TestPatternNear(t *testing.T) {
	names := []string{"ns::Tmpl<int>::get", "ns::Tmpl<long>::get", "ns::Tmpl<int>::set", "pool_alloc", "slab_alloc", "main", "free"}
	for pat, want := range map[string]string{
		"ns::Tmpl<*>::gett": "ns::Tmpl<int>::get ns::Tmpl<long>::get ns::Tmpl<int>::set",
		"*allocz*":          "pool_alloc slab_alloc",
		"zz*":               "",
		"mian*":             "main",
	} {
		var near []string
		for _, n := range names {
			if _, ok := NewPattern(pat).Near(n); ok {
				near = append(near, n)
			}
		}
		got := strings.Join(near, " ")
		if got != want {
			t.Errorf("closest to %q: %q, want %q", pat, got, want)
		}
	}
}
