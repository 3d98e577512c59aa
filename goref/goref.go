// Package goref gives a Go binary built without DWARF (-ldflags='-s -w',
// often -trimpath: how production images are built) the types and function
// signatures of the packages it was built from, by building a reference.
//
// The binary still says everything needed: its build info (debug/buildinfo)
// names the main module and every dependency with its version and the
// checksum of its source, and its .gopclntab every function with its entry
// address. goref writes a small program that imports the named packages,
// pinned by a generated go.mod to exactly those versions (and their
// checksums, so the source is the source the binary was built from), keeps
// the named functions with //go:linkname, and builds it with DWARF for the
// binary's GOOS, GOARCH and build tags, with the binary's Go version when
// the go command can have it. The types and signatures come from the
// reference's DWARF; addresses, returns and inline sites stay the binary's
// own (package code); parameter locations at entry follow Go's register ABI
// from the signature (abi.go).
//
// References are cached under the directory of binscope's caches
// ($BINSCOPE_CACHE/goref, else os.UserCacheDir()/binscope/goref), keyed
// by Go version, GOOS/GOARCH, the modules with their versions and the
// kept functions, so later runs need neither the go command nor the
// network.
package goref

import (
	"debug/buildinfo"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
)

// ErrNotGo is returned for a file that carries no Go build info.
var ErrNotGo = errors.New("no Go build info")

// ErrUnavailable is returned when the source of a module cannot be had:
// a private module without credentials, no network and an empty module
// cache, a dependency replaced by a local directory.
var ErrUnavailable = errors.New("module source not available")

// Options tune Build. A nil *Options means the defaults.
type Options struct {
	// CacheDir holds the references; "" means goref in the directory of
	// binscope's caches ($BINSCOPE_CACHE, else
	// os.UserCacheDir()/binscope).
	CacheDir string
	// Dirs maps a module path to a directory with its source, for
	// modules the go command cannot download (private modules, the main
	// module, dependencies the build replaced by a directory).
	Dirs map[string]string
	// Log receives what was fetched and built, and from where; nil
	// means nothing is said.
	Log io.Writer
	// Go is the go command; "" means "go" from PATH.
	Go string
	// LocalToolchain builds with the local toolchain even when the
	// binary's Go version differs (else the go command is asked for the
	// binary's version through GOTOOLCHAIN, which may download it).
	LocalToolchain bool
}

// OptionsFromEnv reads the options a user sets in the environment:
// BINSCOPE_GOREF_DIRS=module=dir,module=dir (source directories),
// BINSCOPE_GOREF_CACHE (the cache directory) and
// BINSCOPE_GOREF_TOOLCHAIN=local.
func OptionsFromEnv(log io.Writer) *Options {
	o := &Options{Log: log, CacheDir: os.Getenv("BINSCOPE_GOREF_CACHE"),
		LocalToolchain: os.Getenv("BINSCOPE_GOREF_TOOLCHAIN") == "local"}
	for _, kv := range strings.Split(os.Getenv("BINSCOPE_GOREF_DIRS"), ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" && v != "" {
			if o.Dirs == nil {
				o.Dirs = map[string]string{}
			}
			o.Dirs[k] = v
		}
	}
	return o
}

// Origin is what the binary says it was built from.
type Origin struct {
	Path      string // the binary
	GoVersion string // go1.26.8
	Main      debug.Module
	Deps      []*debug.Module
	Settings  map[string]string // -tags, GOOS, GOARCH, CGO_ENABLED, ...
}

// ReadOrigin reads path's build info; ErrNotGo when it has none.
func ReadOrigin(path string) (*Origin, error) {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", path, ErrNotGo, err)
	}
	b := &Origin{Path: path, GoVersion: bi.GoVersion, Main: bi.Main, Deps: bi.Deps, Settings: map[string]string{}}
	for _, s := range bi.Settings {
		b.Settings[s.Key] = s.Value
	}
	return b, nil
}

// Module is the module that holds pkg: the dependency (or the main
// module) whose path is the longest prefix of pkg; nil for the standard
// library, which comes with the toolchain.
func (b *Origin) Module(pkg string) (*debug.Module, bool) {
	if IsStd(pkg) {
		return nil, true
	}
	var best *debug.Module
	match := func(m *debug.Module) {
		if m == nil || m.Path == "" {
			return
		}
		if pkg == m.Path || strings.HasPrefix(pkg, m.Path+"/") {
			if best == nil || len(m.Path) > len(best.Path) {
				best = m
			}
		}
	}
	match(&b.Main)
	for _, d := range b.Deps {
		match(d)
	}
	return best, best != nil
}

// IsStd reports whether pkg is a standard library package: its first
// element has no dot.
func IsStd(pkg string) bool {
	first, _, _ := strings.Cut(pkg, "/")
	return !strings.Contains(first, ".")
}

// PackageOf is the import path of the package that declares the Go
// function or type named name (github.com/x/y.(*T).M, github.com/x/y.T,
// main.f, sync/atomic.Value, a generic p.F[go.shape.int]); "" when name
// has no package.
func PackageOf(name string) string {
	end := len(name)
	if i := strings.IndexAny(name, "[("); i >= 0 {
		end = i
	}
	slash := strings.LastIndex(name[:end], "/")
	dot := strings.Index(name[slash+1:end], ".")
	if dot < 0 {
		return ""
	}
	return name[:slash+1+dot]
}

// Ref is one reference build.
type Ref struct {
	// Path is the reference binary, with DWARF.
	Path string
	// Modules are the modules (module@version) the named packages come
	// from; Packages the packages the reference imports.
	Modules  []string
	Packages []string
	// GoVersion is the binary's Go version, Toolchain the one that
	// built the reference (they differ when the binary's could not be
	// had).
	GoVersion string
	Toolchain string
	// Cached is set when the reference came from the cache, without the
	// go command.
	Cached bool
	// Dropped are the functions of the binary that the reference's
	// source lacks (its toolchain's standard library is not the
	// binary's), which get no parameters.
	Dropped []string
	// Moved are the functions that start at another line in the
	// reference's source than in the binary (Attach), which get no
	// parameters: their source is not the binary's.
	Moved []string
	// Changed are the fields (T.f) of the reference's struct types that
	// the binary's runtime type descriptors place elsewhere, size
	// otherwise or lack (Attach): probes refuse them.
	Changed []string
	// Fetched says what the go command downloaded for this reference,
	// and from where (GOPROXY), when it did.
	Fetched string
}

// Note is the line a tool prints so a user knows where the types came
// from.
func (r *Ref) Note() string {
	from := strings.Join(r.Modules, ", ")
	if from == "" {
		from = "the standard library"
	}
	s := fmt.Sprintf("types and signatures from a reference build of %s with %s, not from the binary itself", from, r.Toolchain)
	if r.Toolchain != r.GoVersion {
		s += fmt.Sprintf(" (the binary was built with %s)", r.GoVersion)
	}
	if len(r.Dropped) > 0 {
		s += fmt.Sprintf("; %d of the binary's functions are not in that source and get no parameters", len(r.Dropped))
	}
	if len(r.Moved) > 0 {
		s += fmt.Sprintf("; %d start at another line than in the binary and get no parameters", len(r.Moved))
	}
	if r.Cached {
		s += " (cached)"
	}
	return s
}

// modulesOf lists, sorted, module@version of every package's module.
func (b *Origin) modulesOf(pkgs []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, p := range pkgs {
		m, ok := b.Module(p)
		if !ok {
			return nil, fmt.Errorf("%s: package %s is in no module the build info names", b.Path, p)
		}
		if m == nil {
			continue
		}
		s := m.Path + "@" + m.Version
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out, nil
}
