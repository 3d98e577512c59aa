package layout_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/layout"
)

// accessOf asks g++ which access a member of class has: it compiles a
// function outside the class that reads it and reads the compiler's
// complaint ("is private within this context").
func accessOf(t *testing.T, gxx, src, class, member string) string {
	t.Helper()
	code := src + "\nint probe_" + member + "(" + class + " &c) { return sizeof(c." + member + "); }\n"
	f := filepath.Join(t.TempDir(), "probe.cc")
	if err := os.WriteFile(f, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(gxx, "-fsyntax-only", f).CombinedOutput()
	switch {
	case err == nil:
		return "public"
	case bytes.Contains(out, []byte("is private within this context")):
		return "private"
	case bytes.Contains(out, []byte("is protected within this context")):
		return "protected"
	}
	t.Fatalf("g++ on %s::%s: %v\n%s", class, member, err, out)
	return ""
}

// TestCPPAccess: C++ classes print as pahole prints them (base classes
// with the access the debug info states, "public:" and the other access
// sections, member functions after the data members, virtual and pure
// virtual marked), and every data member sits in the section of the
// access g++ gives it. pahole 1.24 is the oracle for the base list and
// the member functions; g++ for the sections (pahole 1.24 opens a section
// only where the debug info states an access, so a class's private
// members after public ones stay under "public:").
func TestCPPAccess(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		testutil.Skipf(t, "g++ not installed: %v", err)
	}
	src := "testdata/access.cc"
	text, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "access")
	if out, err := exec.Command(gxx, "-g", "-O0", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	spec, err := dwarf.Load(bin, &dwarf.Options{Methods: true})
	if err != nil {
		t.Fatal(err)
	}
	body := string(text[:bytes.Index(text, []byte("int main"))])
	method := regexp.MustCompile(`^\t(virtual )?\S.* (~?\w+)\(`)
	member := regexp.MustCompile(`^\t[^/].* (\w+);\s+/\*\s+\d+`)
	checked := 0
	for _, class := range []string{"AgentTimeoutCB", "Priv", "Multi"} {
		s := composite(spec, class)
		if s == nil {
			t.Fatalf("%s not loaded", class)
		}
		l, err := layout.Analyze(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := layout.WriteText(&b, l, nil); err != nil {
			t.Fatal(err)
		}
		got := b.String()
		want := runPahole(t, bin, "-C", class)
		if g, w := firstLine(got), firstLine(want); g != w {
			t.Errorf("%s: header %q, pahole's %q", class, g, w)
		}
		if g, w := matches(method, got, 2, 1), matches(method, want, 2, 1); g != w {
			t.Errorf("%s: member functions\n%s\npahole's\n%s", class, g, w)
		}
		section := map[string]string{"class": "private", "struct": "public"}[strings.Fields(got)[0]]
		for _, line := range strings.Split(got, "\n") {
			if strings.HasSuffix(line, ":") && !strings.HasPrefix(line, "\t") {
				section = strings.TrimSuffix(line, ":")
				continue
			}
			if strings.HasPrefix(line, "\t\t") || strings.Contains(line, "<ancestor>") {
				continue
			}
			if m := member.FindStringSubmatch(line); m != nil {
				if w := accessOf(t, gxx, body, class, m[1]); section != w {
					t.Errorf("%s::%s printed under %s:, g++ says %s", class, m[1], section, w)
				}
				checked++
			}
		}
		if t.Failed() {
			t.Logf("ours:\n%s\npahole:\n%s", got, want)
		}
	}
	if checked != 9 {
		t.Errorf("checked the access of %d data members, want the 9 of the three classes", checked)
	}
}

func firstLine(s string) string { return strings.SplitN(s, "\n", 2)[0] }

// matches lists the submatches i (and j, when it matched) of re over the
// lines of s, one per line.
func matches(re *regexp.Regexp, s string, i, j int) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if m := re.FindStringSubmatch(line); m != nil {
			out = append(out, m[j]+m[i])
		}
	}
	return strings.Join(out, "\n")
}
