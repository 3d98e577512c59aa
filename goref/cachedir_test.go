package goref

import (
	"path/filepath"
	"testing"

	"github.com/binscope/binscope/internal/cache"
)

// TestCacheDir: references live under the root every binscope cache moves
// with (BINSCOPE_CACHE), unless BINSCOPE_GOREF_CACHE names their own.
func TestCacheDir(t *testing.T) {
	root := t.TempDir()
	t.Setenv(cache.RootEnv, root)
	t.Setenv("BINSCOPE_GOREF_CACHE", "")
	got, err := OptionsFromEnv(nil).cacheDir()
	if want := filepath.Join(root, "goref"); err != nil || got != want {
		t.Errorf("with %s=%s: %q, %v; want %q", cache.RootEnv, root, got, err, want)
	}
	own := t.TempDir()
	t.Setenv("BINSCOPE_GOREF_CACHE", own)
	if got, err := OptionsFromEnv(nil).cacheDir(); err != nil || got != own {
		t.Errorf("with BINSCOPE_GOREF_CACHE=%s: %q, %v", own, got, err)
	}
}
