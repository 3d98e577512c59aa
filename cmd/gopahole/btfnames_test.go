package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestEncodeInvalidName: a C variable whose name BTF cannot hold (one
// starting with a digit, made by rewriting "xbadvar" to "0badvar" in a
// compiled object, as pahole's btf_invalid_symbols.sh does) stops -J with
// one line naming it and --btf_encode_force, and no .BTF section written
// (readelf -S); with --btf_encode_force it is left out, silently unless
// -V, and the other variables of the object file are VARs at the offsets
// readelf -s gives their symbols in their sections.
func TestEncodeInvalidName(t *testing.T) {
	dir := t.TempDir()
	src, obj := filepath.Join(dir, "vars.c"), filepath.Join(dir, "vars.o")
	err := os.WriteFile(src, []byte("int normal_var = 42;\nstruct simple { int x; };\nstruct simple g;\nint xbadvar = 99;\nint other_var = 7;\n"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	tool(t, "gcc", "-g", "-c", "-o", obj, src)
	data, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.ReplaceAll(data, []byte("xbadvar"), []byte("0badvar"))
	patched := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if !strings.Contains(tool(t, "readelf", "--debug-dump=info", patched("check.o")), "0badvar") {
		t.Fatal("readelf finds no 0badvar in the rewritten object's DWARF")
	}
	hasBTF := func(p string) bool { return strings.Contains(tool(t, "readelf", "-SW", p), " .BTF ") }

	refused := patched("refused.o")
	code, _, errs := run("-J", "--btf_features=global_var", refused)
	if code != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "refused.o") ||
		!strings.Contains(errs, "invalid variable name") || !strings.Contains(errs, "'0badvar'") || !strings.Contains(errs, "--btf_encode_force") {
		t.Errorf("without --btf_encode_force: exit %d, %q", code, errs)
	}
	if hasBTF(refused) {
		t.Error("a .BTF section written despite the invalid name")
	}

	forced := patched("forced.o")
	if code, _, errs := run("-J", "--btf_features=global_var", "--btf_encode_force", forced); code != 0 || errs != "" {
		t.Fatalf("--btf_encode_force: exit %d, %q", code, errs)
	}
	verbose := patched("verbose.o")
	if code, _, errs := run("-J", "--btf_features=global_var", "--btf_encode_force", "-V", verbose); code != 0 ||
		!regexp.MustCompile(`Warning: .*invalid variable name.*'0badvar'`).MatchString(errs) {
		t.Errorf("--btf_encode_force -V: exit %d, stderr %q", code, errs)
	}
	dump := tool(t, "bpftool", "btf", "dump", "file", forced)
	if strings.Contains(dump, "0badvar") {
		t.Errorf("0badvar encoded:\n%s", dump)
	}
	// readelf -s: each variable's section index and offset in it.
	secName := map[string]string{}
	for _, l := range strings.Split(tool(t, "readelf", "-SW", forced), "\n") {
		if m := regexp.MustCompile(`^\s*\[\s*(\d+)\]\s+(\S+)`).FindStringSubmatch(l); m != nil {
			secName[m[1]] = m[2]
		}
	}
	checked := 0
	for _, l := range strings.Split(tool(t, "readelf", "-sW", forced), "\n") {
		f := strings.Fields(l)
		if len(f) != 8 || f[3] != "OBJECT" || f[7] == "0badvar" {
			continue
		}
		off, err := strconv.ParseUint(f[1], 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		ds := regexp.MustCompile(`DATASEC '` + regexp.QuoteMeta(secName[f[6]]) + `' size=\d+ vlen=\d+\n((?:\t.*\n)*)`).FindStringSubmatch(dump)
		if ds == nil || !strings.Contains(ds[1], " offset="+strconv.FormatUint(off, 10)+" size="+f[2]+" (VAR '"+f[7]+"')") {
			t.Errorf("%s: not at offset %d size %s in %s:\n%s", f[7], off, f[2], secName[f[6]], dump)
		}
		checked++
	}
	if checked != 3 {
		t.Errorf("%d variables checked against readelf -s, want 3 (normal_var, g, other_var)", checked)
	}
	loadKernel(t, writeBTF(t, forced))
}

// writeBTF writes the .BTF section of the ELF file path to a raw BTF file
// and returns its path.
func writeBTF(t *testing.T, path string) string {
	t.Helper()
	out := path + ".btf"
	tool(t, "objcopy", "--dump-section", ".BTF="+out, path, filepath.Join(filepath.Dir(out), "dump-scratch.o"))
	return out
}
