package types

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Sentinel errors of the model and its loaders.
var (
	ErrNotFound     = errors.New("not found")
	ErrNoDebugInfo  = errors.New("no debug info")
	ErrNotSupported = errors.New("not supported")
	// ErrPartial comes back with a result that leaves out the records a
	// loader could not decode (corrupt input): the rest is usable, and
	// the error names the first record left out.
	ErrPartial = errors.New("records left out")
)

// Spec is every type one file (a binary, its debug file, a BTF blob) holds.
// Named structs, unions, classes, enums and typedefs are indexed by name; a
// name that several compile units define alike appears once (the loaders
// deduplicate), one defined differently appears once per definition.
type Spec struct {
	// Path is the file the types were read from.
	Path string
	// Format is "dwarf" or "btf".
	Format string
	// Arch is the ELF machine name (x86_64, aarch64), or "" when unknown.
	Arch string
	// PointerSize is the target's pointer size in bytes.
	PointerSize int64
	// Lang is the main language of the file (of its first compile unit
	// with a main subprogram, or of most units).
	Lang Lang
	// Producer is the first compile unit's DW_AT_producer, or "".
	Producer string

	named  []Type // named composites, enums and typedefs in load order
	byName map[string][]Type
	short  map[string][]string // short name -> full names
}

// Add records a named type. Anonymous types are not recorded: they are
// reached through the types that use them.
func (s *Spec) Add(t Type) {
	name := t.TypeName()
	if name == "" {
		return
	}
	if s.byName == nil {
		s.byName = make(map[string][]Type)
		s.short = make(map[string][]string)
	}
	if _, seen := s.byName[name]; !seen {
		sh := ShortName(name)
		if sh != name {
			s.short[sh] = append(s.short[sh], name)
		}
	}
	s.byName[name] = append(s.byName[name], t)
	s.named = append(s.named, t)
}

// Types returns every named type in load order.
func (s *Spec) Types() []Type { return s.named }

// Len returns the number of named types.
func (s *Spec) Len() int { return len(s.named) }

// Lookup returns the types with exactly this qualified name.
func (s *Spec) Lookup(name string) []Type { return s.byName[name] }

// Find resolves a name as a user types it: the exact qualified name first,
// then a unique short name (counter for github.com/x/prometheus.counter,
// Holey for layouts::Holey). It returns ErrNotFound, wrapped with the closest
// names that exist, or an error listing the candidates when the short name
// is ambiguous.
func (s *Spec) Find(name string) ([]Type, error) {
	if ts := s.byName[name]; len(ts) > 0 {
		return ts, nil
	}
	cands := s.short[name]
	if len(cands) == 0 {
		// Also accept a suffix after a package or module separator:
		// prometheus.counter, client_golang/prometheus.counter, inner::T.
		for full := range s.byName {
			if strings.HasSuffix(full, "/"+name) || strings.HasSuffix(full, "."+name) || strings.HasSuffix(full, "::"+name) {
				// Only a path before it: not chan *x/prometheus.Desc.
				if !strings.ContainsAny(full[:len(full)-len(name)], " *[]<>()&") {
					cands = append(cands, full)
				}
			}
		}
		sort.Strings(cands)
	}
	switch len(cands) {
	case 0:
		if near := s.Closest(name, 3); len(near) > 0 {
			return nil, fmt.Errorf("type %q: %w (closest: %s)", name, ErrNotFound, strings.Join(near, ", "))
		}
		return nil, fmt.Errorf("type %q: %w", name, ErrNotFound)
	case 1:
		return s.byName[cands[0]], nil
	}
	if len(cands) > 5 {
		cands = append(cands[:5:5], "...")
	}
	return nil, fmt.Errorf("type %q is ambiguous: %s", name, strings.Join(cands, ", "))
}

// Closest returns up to n existing names nearest to name by edit distance
// on their short forms, nearest first.
func (s *Spec) Closest(name string, n int) []string {
	names := make([]string, 0, len(s.byName))
	for full := range s.byName {
		names = append(names, full)
	}
	return Closest(names, name, n)
}

// Closest returns up to n of names nearest to name by edit distance on
// their short forms, nearest first: the suggestions an error about a name
// that was not found gives (types, functions).
func Closest(names []string, name string, n int) []string {
	lname := strings.ToLower(ShortName(name))
	return Nearest(names, n, func(full string) (int, bool) {
		sh := strings.ToLower(ShortName(full))
		d := editDistance(lname, sh)
		if strings.Contains(sh, lname) || strings.Contains(lname, sh) {
			d = d / 2
		}
		return d, d <= len(lname)/2+1
	})
}

// Nearest are at most n of names by their distance, nearest first, then
// by name; dist says how far a name is and whether it is near at all.
func Nearest(names []string, n int, dist func(string) (int, bool)) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, name := range names {
		if d, ok := dist(name); ok {
			cs = append(cs, cand{name, d})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// ShortName returns a qualified name without its package, module or
// namespace path: github.com/x/y.T gives T, main.Pair[int,string] gives
// Pair[int,string], layouts::Generic<u32> gives Generic<u32>. Separators
// inside generic arguments do not count.
func ShortName(name string) string {
	depth := 0
	cut := 0
	slash := strings.LastIndexByte(untilGeneric(name), '/')
	for i := 0; i < len(name); i++ {
		switch c := name[i]; c {
		case '<', '[', '(':
			depth++
		case '>', ']', ')':
			depth--
		case ':':
			if depth == 0 && i+1 < len(name) && name[i+1] == ':' {
				cut = i + 2
				i++
			}
		case '.':
			// Go: the first dot after the last slash ends the package path.
			if depth == 0 && i > slash && cut <= slash+1 {
				cut = i + 1
			}
		}
	}
	if cut >= len(name) {
		return name
	}
	return name[cut:]
}

func untilGeneric(name string) string {
	if i := strings.IndexAny(name, "<[("); i >= 0 {
		return name[:i]
	}
	return name
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		if a == b {
			return 0
		}
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			c = min(c, prev[j]+1, cur[j-1]+1)
			cur[j] = c
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// OneLine returns err with line breaks in its message escaped (\n, \r), so
// that a name read from corrupt input cannot split the one line an error
// makes. errors.Is and errors.As still see err.
func OneLine(err error) error {
	if err == nil || !strings.ContainsAny(err.Error(), "\n\r") {
		return err
	}
	return oneLine{err}
}

type oneLine struct{ err error }

func (e oneLine) Error() string {
	return strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(e.err.Error())
}

func (e oneLine) Unwrap() error { return e.err }
