package naming

import (
	"regexp"
	"strings"
	"testing"
)

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

// TestCloneAgreesWithExpression checks Clone's hand-written reading
// against the regular expression that states the suffix's grammar (the
// one Clone used before), on every name of up to four dot-separated
// components drawn from kinds, numbers and other words.
func TestCloneAgreesWithExpression(t *testing.T) {
	re := regexp.MustCompile(`^(.+?)\.(part|cold|isra|constprop|lto_priv|clone|specialized)((?:\.[0-9]+|\.(?:part|cold|isra|constprop|lto_priv|clone|specialized))*)$`)
	parts := []string{"", "f", "_ZL1fv", "part", "cold", "isra", "constprop", "lto_priv", "clone", "specialized",
		"0", "12", "x1", "coldx", "1a"}
	n := 0
	var walk func(name string, k int)
	walk = func(name string, k int) {
		var wbase, wkind string
		if m := re.FindStringSubmatch(name); m != nil {
			wbase, wkind = m[1], m[2]
			if strings.Contains(m[3], ".cold") {
				wkind = "cold"
			}
		}
		base, kind, ok := Clone(name)
		if base != wbase || kind != wkind || ok != (wkind != "") {
			t.Errorf("Clone(%q) = %q, %q, %v; the expression says %q, %q", name, base, kind, ok, wbase, wkind)
		}
		n++
		if k == 4 {
			return
		}
		for _, p := range parts {
			walk(name+"."+p, k+1)
		}
	}
	for _, p := range parts {
		walk(p, 1)
	}
	if n < 50000 {
		t.Fatalf("%d names checked, want at least 50,000", n)
	}
}

// TestDropRustHash: the legacy hash goes, whatever else ends like it stays
// (the regular expression ::h[0-9a-f]{16}$ decides the same).
func TestDropRustHash(t *testing.T) {
	re := regexp.MustCompile(`::h[0-9a-f]{16}$`)
	for _, in := range []string{
		"serde_json::de::from_trait::h6070383c1a1c8e22",
		"serde_json::de::from_trait::h6070383c1a1c8e2",  // 15 digits
		"serde_json::de::from_trait::h6070383C1A1C8E22", // upper case
		"serde_json::de::from_trait:h6070383c1a1c8e22",
		"a::hh6070383c1a1c8e22",
		"::h6070383c1a1c8e22",
		"h6070383c1a1c8e22",
		"std::vector<int, std::allocator<int> >::push_back",
		"",
	} {
		if got, want := dropRustHash(in), re.ReplaceAllString(in, ""); got != want {
			t.Errorf("dropRustHash(%q) = %q, want %q", in, got, want)
		}
	}
}
