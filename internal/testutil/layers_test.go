package testutil_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// layers places every package of the module in the pipeline of
// CONVENTIONS.md: leaf helpers and the model's data vocabulary (types,
// standard library only), loaders, models, views, runtime, commands. A
// package may import its own layer and those below it, never one above.
var layers = map[string]int{
	"types": 0, "internal/arch": 0, "internal/leb128": 0, "internal/elfx": 0, "internal/naming": 0,
	"internal/jsonx": 0, "internal/table": 0, "internal/cache": 0, "internal/dwexpr": 0, "internal/testutil": 0,
	"internal/gen": 0, "internal/pcln": 0, "internal/cfi": 0, "internal/bpfasm": 0, "internal/par": 0, "internal/x86": 0,
	"internal/usage": 0, "internal/inflate": 0, "internal/dwarftest": 0, "dwarf/line": 0, "dwarf/loclist": 0,

	"dwarf": 1, "btf": 1, "symtab": 1, "tracepoint": 1, "usdt": 1,

	"code": 2, "goref": 2, "loader": 2,

	"layout": 3, "funcview": 3, "varsview": 3, "codegen": 3, "flame": 3, "stack": 3, "unwind": 3, "probe": 3, "spec": 3, "bpfprog": 3, "metric": 3,
	"pprof": 3, "pretty": 3, "uprobe": 3,

	"runner": 4, "attach": 4,

	"cmd/gopahole": 5, "cmd/gofunct": 5, "cmd/goprobe": 5, "cmd/internal/command": 5, "cmd/internal/cmdtest": 5,
	"cmd/internal/oneshot": 5, "cmd/internal/progress": 5, "bench/exact": 5, "bench/soak": 5,
}

var layerNames = []string{"leaf", "loader", "model", "view", "runtime", "command"}

// TestLayers: every package has a layer, internal/ holds only leaf
// helpers, and imports (tests' imports aside) point down the pipeline or
// stay in their layer.
func TestLayers(t *testing.T) {
	const module = "github.com/binscope/binscope"
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	cmd.Dir = testutil.Root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fs := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fs[0], module), "/")
		from, ok := layers[pkg]
		if !ok {
			t.Errorf("%s: no layer: place it in layers (internal/testutil/layers_test.go)", pkg)
			continue
		}
		if strings.HasPrefix(pkg, "internal/") && from != 0 {
			t.Errorf("%s is in internal/ but not a leaf helper (%s)", pkg, layerNames[from])
		}
		for _, imp := range fs[1:] {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(imp, module+"/")
			to, ok := layers[dep]
			if ok && to > from {
				t.Errorf("%s (%s) imports %s (%s), a layer above it", pkg, layerNames[from], dep, layerNames[to])
			}
			checked++
		}
	}
	if checked < 80 {
		t.Errorf("only %d imports checked", checked)
	}
}

// TestStdlibLeaves: the DWARF line table and location list decoders
// import the standard library and the LEB128 package alone, which imports
// nothing, and not debug/dwarf (the oracle of their tests), as delve's line
// and loclist packages stand apart.
func TestStdlibLeaves(t *testing.T) {
	const leaf = "github.com/binscope/binscope/internal/leb128"
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}: {{join .Imports " "}}`, "./dwarf/line", "./dwarf/loclist", leaf)
	cmd.Dir = testutil.Root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 {
		t.Fatalf("go list: %q", out)
	}
	for _, l := range lines {
		pkg, imports, _ := strings.Cut(l, ": ")
		for _, imp := range strings.Fields(imports) {
			if pkg == leaf {
				t.Errorf("%s imports %s", pkg, imp)
			}
			if imp == leaf {
				continue
			}
			if strings.Contains(imp, ".") || imp == "debug/dwarf" {
				t.Errorf("%s imports %s", pkg, imp)
			}
		}
	}
}

// TestGopaholeLinks: gopahole reads types and prints them; it links no
// runtime (attaching, the agent's metrics and profiles), no BPF program
// generation and no instruction decoder. cilium's asm comes with its btf
// package (BTF's line and function infos); no package of ours asks for it.
func TestGopaholeLinks(t *testing.T) {
	const module = "github.com/binscope/binscope/"
	cmd := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./cmd/gopahole")
	cmd.Dir = testutil.Root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 50 {
		t.Fatalf("only %d packages listed", len(lines))
	}
	bad := []string{module + "runner", module + "attach", module + "bpfprog", module + "probe", module + "stack",
		module + "flame", module + "metric", module + "pprof", "github.com/prometheus/", "github.com/google/pprof",
		"github.com/cilium/ebpf/link", "github.com/cilium/ebpf/ringbuf", "github.com/cilium/ebpf/features",
		"golang.org/x/arch/x86/x86asm",
		// Tables are gofunct's and goprobe's: tablewriter's start-up
		// (a width cache, a regexp) would cost every gopahole run.
		"github.com/olekukonko/tablewriter", module + "internal/table"}
	ours := 0
	for _, l := range lines {
		fs := strings.Fields(l)
		for _, b := range bad {
			if strings.HasPrefix(fs[0], b) {
				t.Errorf("gopahole links %s", fs[0])
			}
		}
		if fs[0] == "github.com/cilium/ebpf" {
			t.Errorf("gopahole links %s (programs and maps)", fs[0])
		}
		if !strings.HasPrefix(fs[0], module) {
			continue
		}
		ours++
		for _, imp := range fs[1:] {
			if imp == "github.com/cilium/ebpf/asm" || imp == "github.com/cilium/ebpf" {
				t.Errorf("%s, which gopahole links, imports %s", fs[0], imp)
			}
		}
	}
	if ours < 15 {
		t.Errorf("only %d of our packages listed", ours)
	}
}

// TestLayersReadme: README's "Layout of the code" draws the same house as
// layers: every package it names sits in the group of its layer, and every
// package of the module but the benchmarks' programs is named there.
func TestLayersReadme(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.Root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "## Layout of the code")
	if start < 0 {
		t.Fatal(`README.md: no "## Layout of the code"`)
	}
	text = text[start:]
	open := strings.Index(text, "```\n")
	end := strings.Index(text[open+4:], "```")
	if open < 0 || end < 0 {
		t.Fatal("README.md: the layout of the code is not in a ``` block")
	}
	group := map[string]int{"leaf": 0, "loaders": 1, "models": 2, "views": 3, "runtime": 4, "commands": 5}
	named := map[string]bool{}
	layer := -1
	for _, line := range strings.Split(text[open+4:open+4+end], "\n") {
		const pkgCol, descCol = 10, 49 // a row: group, packages, what they hold
		if len(line) < descCol {
			continue
		}
		if line[0] != ' ' {
			l, ok := group[strings.TrimSpace(line[:pkgCol])]
			if !ok { // testdata, deploy, bench: directories, not layers
				layer = -1
				continue
			}
			layer = l
		}
		if layer < 0 {
			continue
		}
		for _, pkg := range strings.Fields(line[pkgCol:descCol]) {
			named[pkg] = true
			if l, ok := layers[pkg]; !ok {
				t.Errorf("README.md names %s under %s: no such package in layers", pkg, layerNames[layer])
			} else if l != layer {
				t.Errorf("README.md names %s under %s; layers has it in %s", pkg, layerNames[layer], layerNames[l])
			}
		}
	}
	for pkg := range layers {
		if !named[pkg] && !strings.HasPrefix(pkg, "bench/") {
			t.Errorf("README.md's layout of the code does not name %s (%s)", pkg, layerNames[layers[pkg]])
		}
	}
	if len(named) < 40 {
		t.Errorf("only %d packages named in README.md's layout of the code", len(named))
	}
}
