package layout_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/layout"
	"github.com/binscope/binscope/types"
)

// paholeBlocks splits pahole's output into its types' texts, keyed by the
// name in each header line ("struct holey {" gives holey).
func paholeBlocks(out string) (map[string]string, []string) {
	blocks := map[string]string{}
	var order []string
	var cur strings.Builder
	name := ""
	for _, line := range strings.SplitAfter(out, "\n") {
		if name == "" {
			for _, kw := range []string{"struct ", "union ", "class "} {
				if strings.HasPrefix(line, kw) && strings.HasSuffix(strings.TrimSpace(line), "{") {
					name = strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(line, kw)), "{")
					name = strings.TrimSpace(name)
					if i := strings.Index(name, " :"); i >= 0 {
						name = name[:i]
					}
				}
			}
			if name == "" {
				continue
			}
		}
		cur.WriteString(line)
		if strings.HasPrefix(line, "}") {
			if _, dup := blocks[name]; !dup {
				order = append(order, name)
			}
			blocks[name] = cur.String()
			cur.Reset()
			name = ""
		}
	}
	return blocks, order
}

// runPahole runs pahole with args on path, skipping the test when pahole is
// missing.
func runPahole(t *testing.T, path string, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("pahole")
	if err != nil {
		testutil.Skipf(t, "pahole not installed: %v", err)
	}
	cmd := exec.Command(bin, append(args, path)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pahole %s %s: %v\n%s", strings.Join(args, " "), path, err, stderr.Bytes())
	}
	return string(out)
}

// composite finds the struct or union the spec holds under name.
func composite(spec *types.Spec, name string) *types.Struct {
	for _, ty := range spec.Lookup(name) {
		if s, ok := ty.(*types.Struct); ok && !s.Incomplete {
			return s
		}
	}
	return nil
}

// TestPahole prints every struct and union of the C fixtures, as the DWARF
// loader reads them, and requires pahole 1.24's output byte for byte, with
// the options that change the text (-E, --hex, -r) too.
func TestPahole(t *testing.T) {
	variants := []struct {
		name string
		args []string
		opts layout.PrintOptions
	}{
		{"default", nil, layout.PrintOptions{}},
		{"expand", []string{"-E"}, layout.PrintOptions{Expand: true}},
		{"hex", []string{"--hex"}, layout.PrintOptions{Hex: true}},
		{"rel_expand", []string{"-E", "-r"}, layout.PrintOptions{Expand: true, RelOffset: true}},
		{"cacheline32", []string{"--cacheline_size=32"}, layout.PrintOptions{}},
	}
	for _, fx := range []string{"c-layouts", "c-layouts-dwarf2", "sysheaders", "uapi", "display"} {
		t.Run(fx, func(t *testing.T) {
			var path string
			if !strings.Contains(fx, "-") {
				path = buildC(t, "testdata/"+fx+".c")
			} else {
				path = testutil.Fixture(t, fx).Path
			}
			spec := load(t, path)
			for _, v := range variants {
				t.Run(v.name, func(t *testing.T) {
					blocks, order := paholeBlocks(runPahole(t, path, v.args...))
					if len(order) < 10 {
						t.Fatalf("pahole printed %d types, want the fixture's", len(order))
					}
					opts := &layout.Options{}
					if v.name == "cacheline32" {
						opts.CachelineSize = 32
					}
					compared := 0
					defer func() { t.Logf("%d types compared", compared) }()
					for _, name := range order {
						if strings.Contains(blocks[name], "/* Force padding: */") {
							// pahole's guess at the padding of types without
							// DW_AT_alignment, not printed: see WriteText.
							t.Logf("%s: pahole forces padding, not compared", name)
							continue
						}
						s := composite(spec, name)
						if s == nil {
							t.Errorf("%s: not loaded", name)
							continue
						}
						l, err := layout.Analyze(s, opts)
						if err != nil {
							t.Errorf("%s: %v", name, err)
							continue
						}
						var got bytes.Buffer
						if err := layout.WriteText(&got, l, &v.opts); err != nil {
							t.Fatal(err)
						}
						want := blocks[name]
						compared++
						if got.String() != want {
							t.Errorf("%s: differs from pahole %s\n%s", name, strings.Join(v.args, " "), lineDiff(want, got.String()))
						}
					}
				})
			}
		})
	}
}

// buildC compiles a C source of this package's testdata with gcc -g into
// the test's temporary directory.
func buildC(t *testing.T, src string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testutil.Skipf(t, "gcc not installed: %v", err)
	}
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), ".c"))
	if msg, err := exec.Command(gcc, "-g", "-O0", "-o", out, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", src, err, msg)
	}
	return out
}

func lineDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + itoa(i+1) + ":\n  pahole: " + quote(w) + "\n  ours:   " + quote(g) + "\n--- pahole:\n" + want + "--- ours:\n" + got
		}
	}
	return "(same lines)"
}

// TestPaholeSizesPackable compares WriteSizes with pahole -s and the types
// Packable picks with those pahole --packable lists.
func TestPaholeSizesPackable(t *testing.T) {
	for _, fx := range []string{"c-layouts", "sysheaders", "uapi"} {
		t.Run(fx, func(t *testing.T) {
			path := cSource(t, fx)
			spec := load(t, path)
			sizes := runPahole(t, path, "-s")
			wantPackable := map[string]bool{}
			for _, line := range strings.Split(strings.TrimSpace(runPahole(t, path, "--packable")), "\n") {
				if line != "" {
					wantPackable[strings.Split(line, "\t")[0]] = true
				}
			}
			n := 0
			for _, line := range strings.Split(strings.TrimSpace(sizes), "\n") {
				name := strings.Split(line, "\t")[0]
				s := composite(spec, name)
				if s == nil {
					continue // anonymous types pahole names by typedef
				}
				l, err := layout.Analyze(s, nil)
				if err != nil {
					t.Fatal(err)
				}
				var got bytes.Buffer
				if err := layout.WriteSizes(&got, l); err != nil {
					t.Fatal(err)
				}
				if got.String() != line+"\n" {
					t.Errorf("-s: pahole %q, ours %q", line, got.String())
				}
				r := layout.Reorganize(l, nil)
				if r.Packable() != wantPackable[name] {
					t.Errorf("%s: Packable() = %v, pahole --packable says %v (%d -> %d)", name, r.Packable(), wantPackable[name], l.Size, r.Layout.Size)
				}
				if r.Packable() {
					got.Reset()
					if err := layout.WritePackable(&got, r); err != nil {
						t.Fatal(err)
					}
					if !strings.HasPrefix(got.String(), name+"\t") || strings.Count(got.String(), "\t") != 3 {
						t.Errorf("--packable line %q", got.String())
					}
				}
				n++
			}
			if n < 10 {
				t.Errorf("only %d types compared", n)
			}
		})
	}
}

// typedefBlocks returns pahole's "typedef struct {...} name;" texts by name.
func typedefBlocks(out string) map[string]string {
	blocks := map[string]string{}
	var cur strings.Builder
	in := false
	for _, line := range strings.SplitAfter(out, "\n") {
		if strings.HasPrefix(line, "typedef struct {") || strings.HasPrefix(line, "typedef union {") {
			in = true
			cur.Reset()
		}
		if !in {
			continue
		}
		cur.WriteString(line)
		if strings.HasPrefix(line, "}") {
			in = false
			name := strings.TrimSuffix(strings.TrimSpace(line), ";")
			name = name[strings.LastIndexByte(name, ' ')+1:]
			blocks[name] = cur.String()
		}
	}
	return blocks
}

// TestPaholeTypedefs compares anonymous structs and unions that a typedef
// names ("typedef struct {...} anon_t;") with pahole -a.
func TestPaholeTypedefs(t *testing.T) {
	for _, fx := range []string{"c-layouts", "sysheaders"} {
		t.Run(fx, func(t *testing.T) {
			path := cSource(t, fx)
			spec := load(t, path)
			n := 0
			for name, block := range typedefBlocks(runPahole(t, path, "-a")) {
				var s *types.Struct
				for _, ty := range spec.Lookup(name) {
					if st, ok := types.Resolve(ty).(*types.Struct); ok && st.Name == "" && !st.Incomplete {
						s = st
					}
				}
				if s == nil {
					t.Errorf("typedef %s: no anonymous struct loaded", name)
					continue
				}
				l, err := layout.Analyze(s, nil)
				if err != nil {
					t.Fatal(err)
				}
				l.Name = name
				var got bytes.Buffer
				if err := layout.WriteText(&got, l, nil); err != nil {
					t.Fatal(err)
				}
				if got.String() != block {
					t.Errorf("typedef %s differs from pahole -a\n%s", name, lineDiff(block, got.String()))
				}
				n++
			}
			if n == 0 {
				t.Error("no typedef compared")
			}
			t.Logf("%d typedefs compared", n)
		})
	}
}

// cSource is the binary of a C fixture: the c-layouts fixture, or a file
// under layout/testdata built with gcc -g.
func cSource(t *testing.T, fx string) string {
	if fx == "c-layouts" {
		return testutil.Fixture(t, fx).Path
	}
	return buildC(t, "testdata/"+fx+".c")
}
