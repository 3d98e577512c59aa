package testutil

import (
	"fmt"
	"net/http"
	"os"
	"testing"

	"github.com/google/pprof/profile"
)

// FetchProfile gets the pprof profile a Go program serves at url (its
// net/http/pprof handler: /debug/pprof/heap, .../profile?seconds=N).
func FetchProfile(url string) (*profile.Profile, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	p, err := profile.Parse(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", url, err)
	}
	return p, nil
}

// ReadProfile parses the pprof file at path, failing t when it cannot.
func ReadProfile(t testing.TB, path string) *profile.Profile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p
}

// Frames are the functions of loc, innermost first as pprof orders a
// location's lines: the last holds the address, the others are inlined
// into it.
func Frames(loc *profile.Location) []string {
	var out []string
	for _, l := range loc.Line {
		out = append(out, l.Function.Name)
	}
	return out
}
