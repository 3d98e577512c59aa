package layout_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/layout"
	"github.com/binscope/binscope/types"
)

// flatMember is a member by the name C's offsetof can use, with its offset
// from the start of the outermost type.
type flatMember struct {
	name      string
	offset    int64
	bitOffset int64 // -1 unless a bitfield
}

func flatten(ss []layout.Slot, base int64, out []flatMember) []flatMember {
	for i := range ss {
		s := &ss[i]
		if s.Inner != nil && s.Name() == "" {
			out = flatten(s.Inner.Members, base+s.Offset, out)
			continue
		}
		if s.Name() == "" {
			continue
		}
		fm := flatMember{name: s.Name(), offset: base + s.Offset, bitOffset: -1}
		if s.IsBitfield() {
			fm.bitOffset = int64(s.BitOffset) + base*8
		}
		out = append(out, fm)
	}
	return out
}

// allNames returns the names of members and of members of inner types.
func allNames(ss []layout.Slot, out []string) []string {
	for i := range ss {
		if n := ss[i].Name(); n != "" {
			out = append(out, n)
		}
		if ss[i].Inner != nil {
			out = allNames(ss[i].Inner.Members, out)
		}
	}
	return out
}

var unnamedBitfield = regexp.MustCompile(`(?m)^\t+[^/].* :\d+;$`)

// TestReorganizeCompiles prints every struct of the C fixture as it is and
// as Reorganize suggests, as C, compiles both with gcc and requires the
// compiler to place every member where the layouts say: the text printer
// writes C that means what it shows, and the suggested order is one the
// compiler lays out as predicted.
func TestReorganizeCompiles(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testutil.Skipf(t, "gcc not installed: %v", err)
	}
	for _, src := range []string{"c-layouts", "testdata/sysheaders.c", "testdata/uapi.c"} {
		t.Run(filepath.Base(src), func(t *testing.T) {
			var path, csrc string
			if strings.HasSuffix(src, ".c") {
				path, csrc = buildC(t, src), src
			} else {
				b := testutil.Fixture(t, src)
				path, csrc = b.Path, filepath.Join(b.Dir, "layouts.c")
			}
			abs, err := filepath.Abs(csrc)
			if err != nil {
				t.Fatal(err)
			}
			if moved := compileCheck(t, gcc, abs, load(t, path)); src == "c-layouts" && moved < 3 {
				t.Errorf("only %d types reorganized", moved)
			}
		})
	}
}

// compileCheck prints every C struct and union of spec, and the suggested
// order of those Reorganize moves, compiles them after csrc (the source
// of spec's binary) and compares offsets and sizes with the layouts.
func compileCheck(t *testing.T, gcc, csrc string, spec *types.Spec) (moved int) {
	var src, checks, undef strings.Builder
	want := map[string]string{}
	undefined := map[string]bool{}
	add := func(tag string, l *layout.Layout, text string) {
		// Rename the outer type: "struct holey {" becomes
		// "struct holey__orig {"; nested types keep their names.
		kw := l.Kind.String()
		text = strings.Replace(text, kw+" "+l.Name+" {", kw+" "+l.Name+"__"+tag+" {", 1)
		// Drop the comments after the closing "};".
		last := strings.LastIndex(text, "\n}")
		text = text[:last+1+strings.IndexByte(text[last:], ';')] + "\n"
		src.WriteString(text)
		ty := kw + " " + l.Name + "__" + tag
		key := l.Name + "__" + tag
		fmt.Fprintf(&checks, "\tprintf(\"%s size %%zu\\n\", sizeof(%s));\n", key, ty)
		want[key+" size"] = strconv.FormatInt(l.Size, 10)
		// pahole stands in for unnamed bitfields with ":0" lines that
		// only approximate them ("Force alignment to the next
		// boundary"): bit positions are compared only without them.
		approx := unnamedBitfield.MatchString(text)
		// Headers define some member names as macros (sa_handler):
		// undefine them for the copies.
		for _, name := range allNames(l.Members, nil) {
			if !undefined[name] {
				undefined[name] = true
				fmt.Fprintf(&undef, "#undef %s\n", name)
			}
		}
		for _, m := range flatten(l.Members, 0, nil) {
			if m.bitOffset >= 0 && approx {
				continue
			}
			if m.bitOffset >= 0 {
				fmt.Fprintf(&checks, "\t{ %s v; memset(&v, 0, sizeof v); v.%s = -1; printf(\"%s.%s bit %%ld\\n\", lowbit(&v, sizeof v)); }\n", ty, m.name, key, m.name)
				want[key+"."+m.name+" bit"] = strconv.FormatInt(m.bitOffset, 10)
				continue
			}
			fmt.Fprintf(&checks, "\tprintf(\"%s.%s offset %%zu\\n\", offsetof(%s, %s));\n", key, m.name, ty, m.name)
			want[key+"."+m.name+" offset"] = strconv.FormatInt(m.offset, 10)
		}
	}
	for _, ty := range spec.Types() {
		s, ok := ty.(*types.Struct)
		if !ok || s.Incomplete || s.Name == "" || s.Lang != types.LangC {
			continue
		}
		l, err := layout.Analyze(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		var text bytes.Buffer
		if err := layout.WriteText(&text, l, nil); err != nil {
			t.Fatal(err)
		}
		add("orig", l, text.String())
		r := layout.Reorganize(l, nil)
		if !r.Moved {
			continue
		}
		moved++
		text.Reset()
		if err := layout.WriteReorganized(&text, r, nil); err != nil {
			t.Fatal(err)
		}
		add("reorg", r.Layout, text.String())
	}
	t.Logf("%d sizes and offsets checked, %d types reorganized", len(want), moved)
	dir := t.TempDir()
	prog := fmt.Sprintf(`#define main fixture_main
#include %q
#undef main
#include <stddef.h>
#include <stdio.h>
#include <string.h>

%s
%s
static long lowbit(const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n * 8; i++)
		if (b[i / 8] >> (i %% 8) & 1)
			return (long)i;
	return -1;
}

int main(void)
{
%s	return 0;
}
`, csrc, undef.String(), src.String(), checks.String())
	cfile := filepath.Join(dir, "reorg.c")
	if err := os.WriteFile(cfile, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "reorg")
	if msg, err := exec.Command(gcc, "-w", "-o", exe, cfile).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s\n%s", err, msg, prog)
	}
	out, err := exec.Command(exe).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		i := strings.LastIndexByte(line, ' ')
		got[line[:i]] = line[i+1:]
	}
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if got[k] != want[k] {
			t.Errorf("%s: gcc says %s, layout says %s", k, got[k], want[k])
		}
	}
	return moved
}
