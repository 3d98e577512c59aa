package main

import (
	"math"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestStreamedListing: the whole listing of a file prints the same whether
// it streams (a .debug_info of streamInfoBytes or more) or converts the
// file at once, through the command, with pahole's force-padding guess.
func TestStreamedListing(t *testing.T) {
	defer func(n int64) { streamInfoBytes = n }(streamInfoBytes)
	for _, name := range []string{"cpp-real", "rust-real"} {
		path := testutil.Fixture(t, name).Path
		listing := func(threshold int64) string {
			streamInfoBytes = threshold
			code, out, errs := run(path)
			if code != 0 {
				t.Fatalf("%s: exit %d: %s", name, code, errs)
			}
			return out
		}
		whole, streamed := listing(math.MaxInt64), listing(0)
		if n := strings.Count(whole, "\n};\n"); n < 20 {
			t.Fatalf("%s: %d types listed, want at least 20", name, n)
		}
		if whole != streamed {
			t.Errorf("%s: the streamed listing differs from the whole one:\n%s", name, testutil.FirstDiff([]byte(whole), []byte(streamed)))
		}
	}
}
