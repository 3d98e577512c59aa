package pretty_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/pretty"
	"github.com/binscope/binscope/types"
)

// program builds a record writer, runs it, and returns its binary, the
// records it wrote and what it printed about them: "INDEX PATH" -> value.
func program(t *testing.T, lang, file string) (bin string, recs []byte, truth map[string]string) {
	t.Helper()
	dir := t.TempDir()
	bin = filepath.Join(dir, "rec")
	src, err := filepath.Abs(filepath.Join("testdata", lang))
	if err != nil {
		t.Fatal(err)
	}
	var cmd *exec.Cmd
	switch lang {
	case "c":
		cmd = exec.Command("gcc", "-g", "-O0", "-o", bin, filepath.Join(src, file))
	case "go":
		cmd = exec.Command("go", "build", "-o", bin, ".")
		cmd.Dir = src
	case "rust":
		cmd = exec.Command("rustc", "-g", "-C", "opt-level=0", "-o", bin, filepath.Join(src, file))
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		if _, lerr := exec.LookPath(cmd.Args[0]); lerr != nil {
			testutil.Skipf(t, "%s not installed", cmd.Args[0])
		}
		t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
	recFile := filepath.Join(dir, "recs.bin")
	out, err := exec.Command(bin, recFile).Output()
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	if recs, err = os.ReadFile(recFile); err != nil {
		t.Fatal(err)
	}
	truth = map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			t.Fatalf("%s printed %q", bin, sc.Text())
		}
		truth[k] = v
	}
	return bin, recs, truth
}

// prettifyJSON prints data's records as JSON and flattens them to
// "INDEX PATH" -> value.
func prettifyJSON(t *testing.T, data []byte, s *pretty.Stream) map[string]string {
	t.Helper()
	s.JSON = true
	var out bytes.Buffer
	if err := pretty.Prettify(&out, data, s, nil); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	dec := json.NewDecoder(&out)
	dec.UseNumber()
	for i := 0; dec.More(); i++ {
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		flatten(strconv.Itoa(i)+" ", v, got)
	}
	return got
}

// flatten turns one decoded record (as JSON) into "INDEX PATH" -> value.
func flatten(prefix string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "$variant" {
				out[prefix] = fmt.Sprint(e)
				continue
			}
			flatten(join(prefix, k), e, out)
		}
	case []any:
		for i, e := range x {
			flatten(join(prefix, strconv.Itoa(i)), e, out)
		}
	default:
		out[prefix] = fmt.Sprint(x)
	}
}

func join(a, b string) string {
	if strings.HasSuffix(a, " ") {
		return a + b
	}
	return a + "." + b
}

// same compares a printed value with a decoded one: numbers numerically
// (floats at the precision the program printed), the rest as text.
func same(want, got string) bool {
	if want == got {
		return true
	}
	if strings.HasPrefix(want, "0x") {
		w, err1 := strconv.ParseUint(want[2:], 16, 64)
		g, err2 := strconv.ParseUint(got, 10, 64)
		return err1 == nil && err2 == nil && w == g
	}
	w, err1 := strconv.ParseFloat(want, 64)
	g, err2 := strconv.ParseFloat(got, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	return w == g || float32(w) == float32(g) || math.Abs(w-g) <= 1e-15*math.Abs(w)
}

// TestPrettifyAgainstPrograms: records written by a C, a Go and a Rust
// program decode to what each program printed about them, member by member.
func TestPrettifyAgainstPrograms(t *testing.T) {
	for _, tc := range []struct{ lang, typ string }{{"c", "rec"}, {"go", "main.Rec"}, {"rust", "rec::Rec"}} {
		t.Run(tc.lang, func(t *testing.T) {
			bin, recs, truth := program(t, tc.lang, map[string]string{"c": "rec.c", "go": "", "rust": "rec.rs"}[tc.lang])
			spec, err := dwarf.Load(bin, nil)
			if err != nil {
				t.Fatal(err)
			}
			ts, err := spec.Find(tc.typ)
			if err != nil || len(ts) != 1 {
				t.Fatalf("%s: %v %v", tc.typ, ts, err)
			}
			got := prettifyJSON(t, recs, &pretty.Stream{Type: ts[0], Lookup: lookup(spec)})
			keys := make([]string, 0, len(truth))
			for k := range truth {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if g, ok := got[k]; !ok {
					t.Errorf("%s: not decoded (program printed %s)", k, truth[k])
				} else if !same(truth[k], g) {
					t.Errorf("%s = %s; the program printed %s", k, g, truth[k])
				}
			}
			if len(keys) < 30 {
				t.Errorf("only %d values compared", len(keys))
			}
			t.Logf("%d values compared", len(keys))
		})
	}
}

func lookup(spec *types.Spec) func(string) types.Type {
	return func(name string) types.Type {
		if ts := spec.Lookup(name); len(ts) > 0 {
			return ts[0]
		}
		return nil
	}
}

// TestPrettifyCompilesBack: the C spelling is a valid initializer: the
// records, printed and compiled by gcc as `struct rec recs[] = {...}`,
// are the bytes the program wrote.
func TestPrettifyCompilesBack(t *testing.T) {
	bin, recs, _ := program(t, "c", "rec.c")
	spec, err := dwarf.Load(bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := spec.Find("rec")
	if err != nil {
		t.Fatal(err)
	}
	var init bytes.Buffer
	if err := pretty.Prettify(&init, recs, &pretty.Stream{Type: ts[0]}, nil); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("testdata", "c", "rec.c"))
	if err != nil {
		t.Fatal(err)
	}
	decls, _, _ := strings.Cut(string(src), "int main(")
	dir := t.TempDir()
	prog := decls + "struct rec recs[] = {\n" + init.String() + "};\n" +
		"int main(void) { return fwrite(recs, sizeof recs, 1, stdout) != 1; }\n"
	if err := os.WriteFile(filepath.Join(dir, "back.c"), []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-w", "-o", filepath.Join(dir, "back"), filepath.Join(dir, "back.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc rejects the printed records: %v\n%s\n%s", err, out, prog)
	}
	got, err := exec.Command(filepath.Join(dir, "back")).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, recs) {
		for i := range min(len(got), len(recs)) {
			if got[i] != recs[i] {
				t.Fatalf("compiled back, byte %d of %d differs: %#x, want %#x", i, len(recs), got[i], recs[i])
			}
		}
		t.Fatalf("compiled back: %d bytes, want %d", len(got), len(recs))
	}
}

// TestPrettifyStream: pahole's record options over a perf.data-like file
// (a header whose data member spans variable-sized records of several
// types): --header, --range, sizeof, type_enum, filter, --skip, --count
// give the records the program says it wrote.
func TestPrettifyStream(t *testing.T) {
	bin, data, truth := program(t, "c", "events.c")
	spec, err := dwarf.Load(bin, nil)
	if err != nil {
		t.Fatal(err)
	}
	find := lookup(spec)
	class, err := pretty.ParseClass("ev_header(sizeof,type,type_enum=ev_type,filter=type==EV_BAR)")
	if err != nil {
		t.Fatal(err)
	}
	decode := func(s *pretty.Stream) map[string]string {
		s.Type, s.Class, s.Header, s.Lookup = find(class.Name), class, find("file_header"), find
		return prettifyJSON(t, data, s)
	}
	compare := func(name string, got map[string]string, shift, n int) {
		compared := 0
		for k, want := range truth {
			i, path, _ := strings.Cut(k, " ")
			idx, _ := strconv.Atoi(i)
			if idx < shift || idx >= shift+n {
				continue
			}
			key := strconv.Itoa(idx-shift) + " " + path
			if !same(want, got[key]) {
				t.Errorf("%s: %s = %q; the program wrote %s", name, key, got[key], want)
			}
			compared++
		}
		for k := range got {
			i, _, _ := strings.Cut(k, " ")
			if idx, _ := strconv.Atoi(i); idx >= n {
				t.Errorf("%s: record %s printed; want %d records", name, k, n)
			}
		}
		if compared < 5*n || n == 0 {
			t.Errorf("%s: %d values compared", name, compared)
		}
	}
	compare("--range data", decode(&pretty.Stream{Range: "data"}), 0, 3)
	compare("--seek_bytes/--size_bytes", decode(&pretty.Stream{SeekBytes: "$header.data.offset", SizeBytes: "$header.data.size"}), 0, 3)
	compare("--skip 1 --count 1", decode(&pretty.Stream{Range: "data", Skip: 1, Count: 1}), 1, 1)
}

// TestPrettifyShortInput: a record cut anywhere decodes the members it
// holds and marks the rest `?` with a reason; nothing panics.
func TestPrettifyShortInput(t *testing.T) {
	for _, lang := range []string{"c", "rust"} {
		src := map[string]string{"c": "rec.c", "rust": "rec.rs"}[lang]
		bin, recs, _ := program(t, lang, src)
		spec, err := dwarf.Load(bin, nil)
		if err != nil {
			t.Fatal(err)
		}
		ts, err := spec.Find(map[string]string{"c": "rec", "rust": "rec::Rec"}[lang])
		if err != nil {
			t.Fatal(err)
		}
		size, _ := types.Sizeof(ts[0])
		end := int64(0) // where the last member ends; the rest is padding
		for _, m := range types.Resolve(ts[0]).(*types.Struct).Members {
			ms, _ := types.Sizeof(m.Type)
			end = max(end, m.ByteOffset()+ms)
		}
		unknowns := 0
		for n := int64(0); n < size; n++ {
			node := pretty.Decode(ts[0], recs[:n], nil)
			var b bytes.Buffer
			if err := pretty.Write(&b, ts[0], node, nil); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(b.String(), "?") {
				unknowns++
			}
			if n > size/2 && len(node.Fields) > 0 && node.Fields[0].Value.Unknown != "" {
				t.Errorf("%s: cut at %d of %d bytes, the first member is `?`: %s", lang, n, size, node.Fields[0].Value.Unknown)
			}
		}
		if unknowns != int(end) || end < 32 {
			t.Errorf("%s: %d of %d cut records show `?`; want every cut before byte %d", lang, unknowns, size, end)
		}
	}
}
