package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/binscope/binscope/internal/cache"
	"github.com/binscope/binscope/internal/testutil"
)

// TestMain keeps the index cache of the package's tests in a directory of
// their own, unless BINSCOPE_INDEX_CACHE names one.
func TestMain(m *testing.M) {
	if os.Getenv(cache.Env) == "" {
		dir, err := os.MkdirTemp("", "binscope-index-")
		if err == nil {
			os.Setenv(cache.Env, dir)
			code := m.Run()
			os.RemoveAll(dir)
			os.Exit(code)
		}
	}
	os.Exit(m.Run())
}

// cacheEntries lists the entries under the cache directory.
func cacheEntries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// listings are the plain listings the index cache serves, with the fewest
// lines each must print on the binaries below.
var listings = [][]string{{}, {"-P"}, {"-E"}, {"-s"}, {"-P", "-E"}, {"--locations"}, {"--locations", "-E"}}

// TestIndexCacheIdentical: on real binaries, the listing a cold run prints
// (reading the DWARF and writing the cache), the one a warm run prints from
// the cache, and the one printed with the cache off are byte-identical.
func TestIndexCacheIdentical(t *testing.T) {
	bins := []struct {
		name string
		path func() string
		min  int // functions gofunct lists at least
	}{
		{"cpp-real", func() string { return testutil.Fixture(t, "cpp-real").Path }, 1500},
		{"libc", func() string { return testutil.RealBinary(t, "libc") }, 3000},
		{"libstdc++", func() string { return testutil.RealBinary(t, "libstdc++") }, 3000},
		{"go-cmd", func() string { return testutil.Fixture(t, "go-cmd").Path }, 10000},
	}
	for _, b := range bins {
		t.Run(b.name, func(t *testing.T) {
			path := b.path()
			t.Setenv(cache.Env, t.TempDir())
			for _, flags := range listings {
				args := append(append([]string{}, flags...), path)
				code, plain, errs := runGofunct(append([]string{"--no-cache"}, args...)...)
				if code != 0 {
					t.Fatalf("gofunct --no-cache %v: exit %d: %s", args, code, errs)
				}
				// -s lists only functions with out-of-line code.
				if n, want := strings.Count(plain, "\n"), map[bool]int{true: b.min, false: 100}[len(flags) == 0]; n < want {
					t.Fatalf("gofunct %v: %d lines, want at least %d", args, n, want)
				}
				verbose := append([]string{"-v"}, args...)
				for i, run := range []string{"cold", "warm"} {
					code, out, errs := runGofunct(verbose...)
					if code != 0 {
						t.Fatalf("%s gofunct %v: exit %d: %s", run, args, code, errs)
					}
					if out != plain {
						t.Fatalf("%s gofunct %v: output differs from --no-cache's (%d vs %d bytes)", run, args, len(out), len(plain))
					}
					// The first -P run (and each one before any
					// names entry) reads the binary; later runs
					// read the cache.
					hit := strings.Contains(errs, "listing from the index cache")
					if i == 1 && !hit {
						t.Fatalf("warm gofunct %v did not read the cache: %q", args, errs)
					}
					if strings.Count(errs, "\n") > 1 {
						t.Errorf("%s gofunct %v: stderr %q, want at most one line", run, args, errs)
					}
				}
			}
		})
	}
}

// TestIndexCacheDamaged: a truncated or corrupt entry is ignored with one
// line under -v, the output is the one read from the binary, and the entry
// is written again; a changed binary does not read the old entry.
func TestIndexCacheDamaged(t *testing.T) {
	src := testutil.Fixture(t, "cpp-real").Path
	bin := filepath.Join(t.TempDir(), "cpp-real")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Setenv(cache.Env, dir)
	_, want, _ := runGofunct("--no-cache", bin)
	if strings.Count(want, "\n") < 1500 {
		t.Fatalf("gofunct %s: %d lines, want at least 1500", bin, strings.Count(want, "\n"))
	}
	run := func(what string) string {
		t.Helper()
		code, out, errs := runGofunct("-v", bin)
		if code != 0 || out != want {
			t.Fatalf("%s: exit %d, output %s (stderr %q)", what, code, map[bool]string{true: "identical", false: "differs"}[out == want], errs)
		}
		return errs
	}
	if errs := run("cold"); errs != "" {
		t.Fatalf("cold run: stderr %q, want nothing", errs)
	}
	ents := cacheEntries(t, dir)
	if len(ents) != 1 || !strings.HasSuffix(ents[0], ".names") {
		t.Fatalf("entries after a cold run: %q, want one .names", ents)
	}
	entry := ents[0]
	good, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	for _, dmg := range []struct {
		name string
		data []byte
		says string
	}{
		{"truncated", good[:len(good)/2], "truncated entry"},
		{"empty", nil, "truncated entry"},
		{"corrupt", func() []byte { c := append([]byte{}, good...); c[len(c)/2] ^= 1; return c }(), "checksum mismatch"},
		{"not an entry", []byte(strings.Repeat("garbage\n", 100)), "not an index entry"},
	} {
		if err := os.WriteFile(entry, dmg.data, 0o644); err != nil {
			t.Fatal(err)
		}
		errs := run(dmg.name)
		if strings.Count(errs, "\n") != 1 || !strings.Contains(errs, dmg.says) || !strings.HasPrefix(errs, "gofunct: index cache: ") {
			t.Errorf("%s entry: stderr %q, want one line saying %q", dmg.name, errs, dmg.says)
		}
		if errs := run(dmg.name + ", then rewritten"); !strings.Contains(errs, "listing from the index cache") {
			t.Errorf("after a %s entry the cold run did not write it again: %q", dmg.name, errs)
		}
	}
	// Without -v, nothing on stderr.
	os.WriteFile(entry, good[:10], 0o644)
	if code, out, errs := runGofunct(bin); code != 0 || out != want || errs != "" {
		t.Errorf("damaged entry without -v: exit %d, stderr %q", code, errs)
	}
	// A binary changed in place (here only its mtime) gets a new entry.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(bin, later, later); err != nil {
		t.Fatal(err)
	}
	if errs := run("touched binary"); strings.Contains(errs, "listing from the index cache") {
		t.Errorf("a changed binary read the old entry: %q", errs)
	}
	if n := len(cacheEntries(t, dir)); n != 2 {
		t.Errorf("%d entries after the binary changed, want 2", n)
	}
	// --no-cache and BINSCOPE_INDEX_CACHE=off neither read nor write.
	t.Setenv(cache.Env, "off")
	if errs := run("cache off"); errs != "" {
		t.Errorf("%s=off: stderr %q", cache.Env, errs)
	}
}

// TestIndexCacheSplitDWARF: a binary with split DWARF (its .dwo files
// are not part of the key) is never served from the cache nor written to
// it, plain or compressed as SHF_COMPRESSED: cold and warm runs print what
// --no-cache prints, and the cache stays empty.
func TestIndexCacheSplitDWARF(t *testing.T) {
	src := testutil.Fixture(t, "c-split").Path
	gz := filepath.Join(t.TempDir(), "c-split-zlib")
	if out, err := exec.Command("objcopy", "--compress-debug-sections=zlib", src, gz).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, out)
	}
	for _, bin := range []string{src, gz} {
		dir := t.TempDir()
		t.Setenv(cache.Env, dir)
		for _, flags := range listings {
			args := append(append([]string{}, flags...), bin)
			_, want, _ := runGofunct(append([]string{"--no-cache"}, args...)...)
			if !strings.Contains(want, "record_visit") {
				t.Fatalf("gofunct --no-cache %v: no record_visit in %q", args, want)
			}
			for _, run := range []string{"cold", "warm"} {
				code, out, errs := runGofunct(append([]string{"-v"}, args...)...)
				if code != 0 || out != want || strings.Contains(errs, "index cache") {
					t.Fatalf("%s gofunct -v %v: exit %d, output %v to --no-cache's, stderr %q", run, args, code, out == want, errs)
				}
			}
		}
		if ents := cacheEntries(t, dir); len(ents) != 0 {
			t.Errorf("%s: entries %q, want none", bin, ents)
		}
	}
}
