package goref

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/binscope/binscope/internal/cache"
)

// Keepable reports whether the function named name can be kept in a
// reference with //go:linkname: a function or method of a package
// (p.F, p.T.M, p.(*T).M), not a closure (p.F.func1), a generic
// instantiation, an init function, an assembly function or a wrapper the
// compiler made for go and defer statements.
func Keepable(name string) bool {
	pkg := PackageOf(name)
	if pkg == "" || pkg == "main" {
		return false
	}
	rest := name[len(pkg)+1:]
	if !keepRE().MatchString(rest) {
		return false
	}
	last := rest[strings.LastIndex(rest, ".")+1:]
	switch {
	case strings.HasPrefix(last, "func") && isDigits(last[4:]),
		strings.HasPrefix(last, "gowrap"), strings.HasPrefix(last, "deferwrap"),
		last == "init", strings.HasPrefix(rest, "init."), last == "abi0":
		return false
	}
	return true
}

// The expressions are compiled on first use, not at every program start.
var keepRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\(\*[A-Za-z_][A-Za-z0-9_]*\)|[A-Za-z_][A-Za-z0-9_]*)(\.[A-Za-z_][A-Za-z0-9_]*)?$`)
})

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	_, err := strconv.Atoi(s)
	return err == nil
}

// Build returns the reference for the packages of names (Go functions
// and types, qualified by their import paths) in the binary at bin,
// keeping the functions keep names (see Keepable): from the cache when
// it has one, else built. Errors: ErrNotGo for a file without build
// info; ErrUnavailable, with what to do, when a module's source cannot be
// had.
func Build(bin string, names, keep []string, opts *Options) (*Ref, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Go == "" {
		o.Go = "go"
	}
	b, err := ReadOrigin(bin)
	if err != nil {
		return nil, err
	}
	pkgSet := map[string]bool{}
	for _, n := range names {
		if p := PackageOf(n); p != "" {
			pkgSet[p] = true
		}
	}
	var kept []string
	for _, k := range keep {
		if Keepable(k) && !contains(kept, k) {
			kept = append(kept, k)
			pkgSet[PackageOf(k)] = true
		}
	}
	sort.Strings(kept)
	var pkgs []string
	for p := range pkgSet {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("%s: no package to build a reference of: name functions and types by their import paths (github.com/x/y.T)", bin)
	}
	for _, p := range pkgs {
		if p == "main" || p == b.Path {
			return nil, fmt.Errorf("%s: %w: package main (%s) cannot be imported by a reference build; probe or print the types of its dependencies, or build the program with DWARF", bin, ErrUnavailable, b.Path)
		}
		m, ok := b.Module(p)
		if !ok {
			return nil, fmt.Errorf("%s: %w: package %s is in no module the build info names", bin, ErrUnavailable, p)
		}
		if m == nil {
			continue
		}
		if _, ok := o.Dirs[m.Path]; ok {
			continue
		}
		if m == &b.Main || m.Version == "(devel)" || m.Version == "" {
			return nil, fmt.Errorf("%s: %w: %s is the main module, which the build info records without a version: name its source with BINSCOPE_GOREF_DIRS=%s=DIR", bin, ErrUnavailable, m.Path, m.Path)
		}
		if m.Replace != nil && m.Replace.Version == "" {
			return nil, fmt.Errorf("%s: %w: %s was replaced by the directory %s in the build: name its source with BINSCOPE_GOREF_DIRS=%s=DIR", bin, ErrUnavailable, m.Path, m.Replace.Path, m.Path)
		}
	}
	mods, err := b.modulesOf(pkgs)
	if err != nil {
		return nil, err
	}
	modCache := goEnv(o.Go, append(os.Environ(), "GOTOOLCHAIN=local"), "GOMODCACHE")
	local, err := goVersion(&o, modCache, "")
	if err != nil {
		return nil, fmt.Errorf("%s: a reference build needs the go command: %v", bin, err)
	}
	toolchain := toolchainFor(&o, modCache, b.GoVersion, local)
	ref := &Ref{Modules: mods, Packages: pkgs, GoVersion: b.GoVersion, Toolchain: toolchain}

	base, err := o.cacheDir()
	if err != nil {
		return nil, fmt.Errorf("%s: no cache directory for reference builds (%v): set BINSCOPE_CACHE or BINSCOPE_GOREF_CACHE", bin, err)
	}
	key := b.key(toolchain, pkgs, kept, o.Dirs)
	label := "std"
	if len(mods) > 0 {
		label = strings.ReplaceAll(mods[0], "/", "_")
	}
	dir := filepath.Join(base, toolchain+"-"+b.Settings["GOOS"]+"-"+b.Settings["GOARCH"], label, key[:16])
	ref.Path = filepath.Join(dir, "ref")
	if st, err := os.Stat(ref.Path); err == nil && st.Mode().IsRegular() {
		ref.Cached = true
		if meta, err := os.ReadFile(filepath.Join(dir, "meta.json")); err == nil {
			var m struct {
				Toolchain string
				Dropped   []string
			}
			if json.Unmarshal(meta, &m) == nil && m.Toolchain != "" {
				ref.Toolchain, ref.Dropped = m.Toolchain, m.Dropped
			}
		}
		return ref, nil
	}
	if err := b.build(&o, ref, dir, modCache, kept); err != nil {
		return nil, err
	}
	return ref, nil
}

var releaseRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^go[0-9]+\.[0-9]+(\.[0-9]+)?$`) })

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// key names a reference: everything that decides its content.
func (b *Origin) key(toolchain string, pkgs, kept []string, dirs map[string]string) string {
	h := sha256.New()
	fmt.Fprintln(h, "goref 2", toolchain, b.Settings["GOOS"], b.Settings["GOARCH"], b.Settings["-tags"], b.Settings["CGO_ENABLED"])
	for _, d := range b.Deps {
		fmt.Fprintln(h, d.Path, d.Version, d.Sum)
		if d.Replace != nil {
			fmt.Fprintln(h, "=>", d.Replace.Path, d.Replace.Version, d.Replace.Sum)
		}
	}
	var ds []string
	for k, v := range dirs {
		ds = append(ds, k+"="+v)
	}
	sort.Strings(ds)
	fmt.Fprintln(h, ds, pkgs, kept)
	return hex.EncodeToString(h.Sum(nil))
}

// build writes the reference program to dir/src and builds dir/ref.
// Functions of kept that the toolchain's source lacks (the binary's Go
// version could not be had, or a build tag differs) are dropped, named
// in ref.Dropped, and the build is run again without them.
func (b *Origin) build(o *Options, ref *Ref, dir, modCache string, kept []string) error {
	pl, err := placeFor(ref.Packages)
	if err != nil {
		return fmt.Errorf("%s: %w", b.Path, err)
	}
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return fmt.Errorf("reference build: %v", err)
	}
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN="+toolchainEnv(ref.Toolchain))
	for _, k := range []string{"GOOS", "GOARCH", "CGO_ENABLED", "GOAMD64", "GOARM64"} {
		if v := b.Settings[k]; v != "" {
			env = append(env, k+"="+v)
		}
	}
	if err := writeFiles(src, map[string]string{"go.mod": b.goMod(pl.Module, ref.Toolchain, o.Dirs), "go.sum": b.goSum(o.Dirs)}); err != nil {
		return err
	}
	args := []string{"build", "-o", filepath.Join(dir, "ref.tmp")}
	if f := ldflags(ref.Toolchain); f != "" {
		args = append(args, "-ldflags="+f)
	}
	if tags := b.Settings["-tags"]; tags != "" {
		args = append(args, "-tags="+tags)
	}
	target := "."
	if pl.Std != "" {
		ov, err := overlay(o, modCache, src, env, pl.Std)
		if err != nil {
			return fmt.Errorf("%s: reference build: %v", b.Path, err)
		}
		args, target = append(args, "-overlay="+ov), pl.Std
	}
	args = append(args, target)
	missing := b.missing(modCache)
	if o.Log != nil {
		fmt.Fprintf(o.Log, "goref: building a reference of %s with %s in %s\n", strings.Join(ref.Packages, ", "), ref.Toolchain, src)
	}
	start := time.Now()
	var errOut string
	for attempt := 0; ; attempt++ {
		if err := writeFiles(src, map[string]string{"main.go": mainGo(ref, kept)}); err != nil {
			return err
		}
		_, errOut, err = goRun(o, modCache, src, env, args...)
		gone := undefined(errOut, kept)
		if err == nil || attempt == 8 || len(gone) == 0 || len(gone) == len(kept) {
			break
		}
		kept = without(kept, gone)
		ref.Dropped = append(ref.Dropped, gone...)
		if o.Log != nil {
			fmt.Fprintf(o.Log, "goref: %d functions of the binary are not in %s's source of %s (%s): building without them, they get no parameters\n",
				len(gone), ref.Toolchain, strings.Join(ref.Packages, ", "), abbrev(gone, 3))
		}
	}
	b.reportFetched(o, ref, env, modCache, missing)
	if err != nil {
		os.WriteFile(filepath.Join(src, "build.log"), []byte(errOut), 0o644)
		err = b.buildError(errOut, err, src, ref.Modules)
		if o.Log != nil && !errors.Is(err, ErrUnavailable) {
			// Not a source that cannot be had, which the error says in
			// full: the go command's whole word.
			fmt.Fprintf(o.Log, "goref: go %s (in %s) failed:\n\t%s\n", strings.Join(args, " "), src, strings.ReplaceAll(strings.TrimSpace(errOut), "\n", "\n\t"))
		}
		return err
	}
	if err := os.Rename(filepath.Join(dir, "ref.tmp"), ref.Path); err != nil {
		return fmt.Errorf("reference build: %v", err)
	}
	sort.Strings(ref.Dropped)
	meta, _ := json.MarshalIndent(map[string]any{
		"binary": b.Path, "goVersion": b.GoVersion, "toolchain": ref.Toolchain, "modules": ref.Modules,
		"packages": ref.Packages, "kept": len(kept), "dropped": ref.Dropped, "fetched": ref.Fetched, "seconds": time.Since(start).Seconds(),
	}, "", "  ")
	os.WriteFile(filepath.Join(dir, "meta.json"), append(meta, '\n'), 0o644)
	if o.Log != nil {
		fmt.Fprintf(o.Log, "goref: built %s in %.1fs\n", ref.Path, time.Since(start).Seconds())
	}
	return nil
}

// reportFetched says which of the modules missing from the module cache
// before the build the go command fetched, and from where.
func (b *Origin) reportFetched(o *Options, ref *Ref, env []string, modCache string, missing []*debug.Module) {
	var fetched []string
	for _, m := range missing {
		if _, err := os.Stat(zipPath(modCache, m)); err == nil {
			fetched = append(fetched, m.Path+"@"+m.Version)
		}
	}
	if len(fetched) > 0 {
		ref.Fetched = fmt.Sprintf("fetched %s through GOPROXY=%s into %s", strings.Join(fetched, " "), goEnv(o.Go, env, "GOPROXY"), modCache)
		if o.Log != nil {
			fmt.Fprintf(o.Log, "goref: %s\n", ref.Fetched)
		}
	}
}

func writeFiles(dir string, files map[string]string) error {
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return fmt.Errorf("reference build: %v", err)
		}
	}
	return nil
}

// overlay writes src/overlay.json, which adds src/main.go to the
// toolchain's source tree as the package pkg (cmd/go/binscoperef), so
// that it may import the internal packages of the tree it lies in;
// nothing is written to the toolchain's tree.
func overlay(o *Options, modCache, src string, env []string, pkg string) (string, error) {
	out, errOut, err := goRun(o, modCache, src, env, "env", "GOROOT")
	root := strings.TrimSpace(out)
	if err != nil || root == "" {
		return "", fmt.Errorf("no GOROOT: %s", lastWord(errOut, err))
	}
	js, _ := json.Marshal(map[string]map[string]string{"Replace": {
		filepath.Join(root, "src", filepath.FromSlash(pkg), "main.go"): filepath.Join(src, "main.go"),
	}})
	path := filepath.Join(src, "overlay.json")
	if err := os.WriteFile(path, js, 0o644); err != nil {
		return "", err
	}
	return path, nil
}

// undefined are the functions of kept the linker reported missing
// ("main.keep58·f: relocation target net/http.(*ServeMux).handler not
// defined").
func undefined(errOut string, kept []string) []string {
	var out []string
	for _, l := range strings.Split(errOut, "\n") {
		_, rest, ok := strings.Cut(l, "relocation target ")
		if !ok {
			continue
		}
		if name, ok := strings.CutSuffix(strings.TrimSpace(rest), " not defined"); ok && contains(kept, name) && !contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

func without(xs, drop []string) []string {
	var out []string
	for _, x := range xs {
		if !contains(drop, x) {
			out = append(out, x)
		}
	}
	return out
}

// abbrev lists the first n of xs and how many more there are.
func abbrev(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(xs[:n], ", "), len(xs)-n)
}

func toolchainEnv(v string) string {
	if releaseRE().MatchString(v) {
		return v
	}
	return "local"
}

func goEnv(goCmd string, env []string, name string) string {
	cmd := exec.Command(goCmd, "env", name)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// missing are the dependencies whose source the module cache lacks.
func (b *Origin) missing(modCache string) []*debug.Module {
	if modCache == "" {
		return nil
	}
	var out []*debug.Module
	for _, d := range b.Deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		if m.Version == "" {
			continue
		}
		if _, err := os.Stat(zipPath(modCache, m)); err != nil {
			out = append(out, m)
		}
	}
	return out
}

// zipPath is where the module cache keeps m's source archive.
func zipPath(modCache string, m *debug.Module) string {
	return filepath.Join(modCache, "cache", "download", escape(m.Path), "@v", escape(m.Version)+".zip")
}

// escape is the module cache's case encoding: an upper-case letter is
// '!' and the letter in lower case.
func escape(s string) string {
	var sb strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			sb.WriteByte('!')
			r += 'a' - 'A'
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// buildError turns the go command's complaint into one line that says
// what to do.
func (b *Origin) buildError(out string, err error, src string, needed []string) error {
	unavailable := []string{"GOPROXY=off", "404", "410", "not found", "unknown revision", "terminal prompts disabled",
		"dial tcp", "no such host", "i/o timeout", "connection refused", "cannot find module", "missing go.sum entry", "invalid version"}
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "go: downloading") && !strings.HasPrefix(l, "go: finding") {
			lines = append(lines, l)
		}
	}
	line := firstLine(strings.Join(lines, "\n"), err)
	for _, l := range lines {
		if !strings.HasPrefix(l, "# ") {
			line = l // "# binscope.local/ref" only names the package
			break
		}
	}
pick:
	for _, l := range lines {
		for _, u := range append(unavailable, "checksum mismatch", "SECURITY ERROR") {
			if strings.Contains(l, u) {
				line = l
				break pick
			}
		}
	}
	mod := ""
	for _, d := range b.Deps {
		if strings.Contains(line, d.Path+"@") || strings.Contains(line, d.Path+" ") || strings.Contains(line, d.Path+":") {
			if len(d.Path) > len(mod) {
				mod = d.Path + "@" + d.Version
			}
		}
	}
	if mod == "" {
		// "main.go:11:2: module lookup disabled": the import of a needed
		// package's module.
		for _, l := range lines {
			for _, n := range needed {
				if p, _, _ := strings.Cut(n, "@"); strings.Contains(l, p) {
					mod = n
				}
			}
		}
		if mod == "" && len(needed) == 1 {
			mod = needed[0]
		}
	}
	for _, u := range unavailable {
		if strings.Contains(line, u) {
			what := "a module"
			if mod != "" {
				what = mod
			}
			return fmt.Errorf("%s: %w: the source of %s cannot be had (%s): let GOPROXY reach it (a private module: GOPRIVATE and credentials), fill the module cache where there is a network (go mod download %s), or name its source with BINSCOPE_GOREF_DIRS=MODULE=DIR",
				b.Path, ErrUnavailable, what, line, strings.Replace(what, "a module", "MODULE@VERSION", 1))
		}
	}
	if strings.Contains(line, "checksum mismatch") || strings.Contains(line, "SECURITY ERROR") {
		return fmt.Errorf("%s: %w: the module source differs from what the binary was built from (%s)", b.Path, ErrUnavailable, line)
	}
	return fmt.Errorf("%s: the reference build failed: %s (the go command's whole output is in %s)", b.Path, line, filepath.Join(src, "build.log"))
}

func firstLine(out string, err error) string {
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	if err != nil {
		return err.Error()
	}
	return "failed"
}

// cacheDir is where references are kept: o.CacheDir, else goref under
// the directory every binscope cache lives under (cache.Root).
func (o *Options) cacheDir() (string, error) {
	if o.CacheDir != "" {
		return o.CacheDir, nil
	}
	root, err := cache.Root()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "goref"), nil
}
