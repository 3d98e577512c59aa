package cache

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/binscope/binscope/internal/elfx"
)

func newCache(t *testing.T) (*Cache, *[]string) {
	var logged []string
	return &Cache{Dir: t.TempDir(), Log: func(m string) { logged = append(logged, m) }}, &logged
}

// TestRoundTrip: what Put wrote, Get returns; another kind, key or version
// finds nothing.
func TestRoundTrip(t *testing.T) {
	c, logged := newCache(t)
	key := Key("a", "b")
	data := bytes.Repeat([]byte("row\n"), 1000)
	c.Put("names", 1, key, data)
	got, ok := c.Get("names", 1, key)
	if !ok || !bytes.Equal(got, data) {
		t.Fatalf("Get = %d bytes, %v; want the %d bytes written", len(got), ok, len(data))
	}
	if _, ok := c.Get("protos", 1, key); ok {
		t.Error("Get of another kind found an entry")
	}
	if _, ok := c.Get("names", 1, Key("a", "c")); ok {
		t.Error("Get of another key found an entry")
	}
	if _, ok := c.Get("names", 2, key); ok {
		t.Error("Get of another format version trusted the entry")
	}
	if len(*logged) != 1 || !strings.Contains((*logged)[0], "format version 1, not 2") {
		t.Errorf("log = %q, want one line for the version mismatch", *logged)
	}
	// Keys separate their parts: ("ab", "") is not ("a", "b").
	if Key("ab", "") == Key("a", "b") {
		t.Error("Key does not separate its parts")
	}
	// Atomic writes leave no temporary file behind.
	ents, _ := os.ReadDir(filepath.Dir(c.path("names", key)))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// TestDamagedEntries: every truncation and every flipped byte of an entry
// is detected; none is trusted.
func TestDamagedEntries(t *testing.T) {
	c, logged := newCache(t)
	key := Key("damaged")
	data := []byte("some rows of a listing, long enough to be damaged in many places")
	c.Put("names", 1, key, data)
	p := c.path("names", key)
	good, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(good); n++ {
		if err := os.WriteFile(p, good[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		if got, ok := c.Get("names", 1, key); ok {
			t.Fatalf("entry truncated to %d of %d bytes trusted: %q", n, len(good), got)
		}
	}
	for i := range good {
		bad := append([]byte{}, good...)
		bad[i] ^= 0x20
		if err := os.WriteFile(p, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if got, ok := c.Get("names", 1, key); ok {
			t.Fatalf("entry with byte %d flipped trusted: %q", i, got)
		}
	}
	if want := 2 * len(good); len(*logged) != want {
		t.Errorf("%d log lines for %d damaged entries", len(*logged), want)
	}
}

// TestOff: BINSCOPE_INDEX_CACHE=off gives a nil cache that stores nothing;
// a directory moves it.
func TestOff(t *testing.T) {
	t.Setenv(Env, "off")
	c := Open(nil)
	if c != nil {
		t.Fatalf("Open with %s=off = %+v, want nil", Env, c)
	}
	c.Put("names", 1, Key("x"), []byte("x"))
	if _, ok := c.Get("names", 1, Key("x")); ok {
		t.Error("a nil cache found an entry")
	}
	dir := t.TempDir()
	t.Setenv(Env, dir)
	if c := Open(nil); c == nil || c.Dir != dir {
		t.Errorf("Open with %s=%s = %+v", Env, dir, c)
	}
}

// TestFileKey: the key changes when the file or its debug file changes
// (size or mtime), and names the build-id when there is one.
func TestFileKey(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "bin")
	if err := os.WriteFile(p, src, 0o755); err != nil {
		t.Fatal(err)
	}
	key := func() string {
		ef, err := elfx.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer ef.Close()
		k, err := FileKey(ef, nil)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	k1 := key()
	if !strings.HasPrefix(k1, "path ") && !strings.HasPrefix(k1, "build-id ") {
		t.Errorf("FileKey = %q", k1)
	}
	if k2 := key(); k2 != k1 {
		t.Errorf("FileKey changed without a change: %q, %q", k1, k2)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
	if k3 := key(); k3 == k1 {
		t.Errorf("FileKey did not change with the mtime: %q", k3)
	}
}

// TestPrune: entries older than maxAge and stale temporary files go when
// an entry is written; others stay.
func TestPrune(t *testing.T) {
	c, _ := newCache(t)
	key := Key("new")
	dir := filepath.Dir(c.path("names", key))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "old.names")
	tmp := filepath.Join(dir, ".tmp-123")
	recent := filepath.Join(dir, "recent.names")
	for _, p := range []string{old, tmp, recent} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-maxAge - time.Hour)
	os.Chtimes(old, long, long)
	os.Chtimes(tmp, long, long)
	c.Put("names", 1, key, []byte("x"))
	for p, want := range map[string]bool{old: false, tmp: false, recent: true, c.path("names", key): true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists=%v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}
