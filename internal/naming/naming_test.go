package naming

import "testing"

func TestStripTemplates(t *testing.T) {
	for in, want := range map[string]string{
		"std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>": "std::vector::_M_realloc_insert",
		"operator new":                      "operator new",
		"ns::operator<<":                    "ns::operator<<",
		"ns::operator< <int>":               "ns::operator< ",
		"std::less<void>::operator()<int&>": "std::less::operator()",
		"plain":                             "plain",
	} {
		if got := StripTemplates(in); got != want {
			t.Errorf("StripTemplates(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClone(t *testing.T) {
	for in, want := range map[string][2]string{
		"foo.part.0":               {"foo", "part"},
		"foo.cold":                 {"foo", "cold"},
		"foo.part.0.cold":          {"foo", "cold"},
		"weigh.constprop.0.isra.0": {"weigh", "constprop"},
		"ucd_dealloc.lto_priv.0":   {"ucd_dealloc", "lto_priv"},
		"_ZL5checki.constprop.0":   {"_ZL5checki", "constprop"},
		"maps.clone[go.shape.int]": {"", ""},
		"plain_name":               {"", ""},
	} {
		base, kind, _ := Clone(in)
		if base != want[0] || kind != want[1] {
			t.Errorf("Clone(%q) = %q, %q; want %q, %q", in, base, kind, want[0], want[1])
		}
	}
}
