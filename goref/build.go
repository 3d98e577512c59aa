package goref

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
	local, err := goVersion(o.Go, "")
	if err != nil {
		return nil, fmt.Errorf("%s: a reference build needs the go command: %v", bin, err)
	}
	toolchain := local
	if b.GoVersion != local && !o.LocalToolchain && releaseRE().MatchString(b.GoVersion) {
		if v, err := goVersion(o.Go, b.GoVersion); err == nil && v == b.GoVersion {
			toolchain = v
		} else if o.Log != nil {
			fmt.Fprintf(o.Log, "goref: %s is not available (%v); building the reference with the local %s: layouts of the standard library may differ\n", b.GoVersion, err, local)
		}
	}
	ref := &Ref{Modules: mods, Packages: pkgs, GoVersion: b.GoVersion, Toolchain: toolchain}

	base := o.CacheDir
	if base == "" {
		uc, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("%s: no cache directory for reference builds (%v): set BINSCOPE_GOREF_CACHE", bin, err)
		}
		base = filepath.Join(uc, "binscope", "goref")
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
			var m struct{ Toolchain string }
			if json.Unmarshal(meta, &m) == nil && m.Toolchain != "" {
				ref.Toolchain = m.Toolchain
			}
		}
		return ref, nil
	}
	if err := b.build(&o, ref, dir, kept); err != nil {
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

// goVersion is the go command's version with GOTOOLCHAIN=toolchain
// ("" for the environment's choice).
func goVersion(goCmd, toolchain string) (string, error) {
	cmd := exec.Command(goCmd, "env", "GOVERSION")
	cmd.Env = os.Environ()
	if toolchain != "" {
		cmd.Env = append(cmd.Env, "GOTOOLCHAIN="+toolchain)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s", firstLine(string(out), err))
	}
	return strings.TrimSpace(string(out)), nil
}

// key names a reference: everything that decides its content.
func (b *Origin) key(toolchain string, pkgs, kept []string, dirs map[string]string) string {
	h := sha256.New()
	fmt.Fprintln(h, "goref 1", toolchain, b.Settings["GOOS"], b.Settings["GOARCH"], b.Settings["-tags"], b.Settings["CGO_ENABLED"])
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
func (b *Origin) build(o *Options, ref *Ref, dir string, kept []string) error {
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return fmt.Errorf("reference build: %v", err)
	}
	files := map[string]string{
		"go.mod":  b.goMod(ref.Toolchain, o.Dirs),
		"go.sum":  b.goSum(o.Dirs),
		"main.go": mainGo(ref, kept),
		"keep.s":  "// Lets main.go declare the functions it keeps without bodies.\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			return fmt.Errorf("reference build: %v", err)
		}
	}
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN="+toolchainEnv(ref.Toolchain))
	for _, k := range []string{"GOOS", "GOARCH", "CGO_ENABLED", "GOAMD64", "GOARM64"} {
		if v := b.Settings[k]; v != "" {
			env = append(env, k+"="+v)
		}
	}
	modCache := goEnv(o.Go, env, "GOMODCACHE")
	missing := b.missing(modCache)
	args := []string{"build", "-o", filepath.Join(dir, "ref.tmp"), "-ldflags=-checklinkname=0"}
	if tags := b.Settings["-tags"]; tags != "" {
		args = append(args, "-tags="+tags)
	}
	args = append(args, ".")
	if o.Log != nil {
		fmt.Fprintf(o.Log, "goref: building a reference of %s with %s in %s\n", strings.Join(ref.Packages, ", "), ref.Toolchain, src)
	}
	start := time.Now()
	cmd := exec.Command(o.Go, args...)
	cmd.Dir, cmd.Env = src, env
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err := cmd.Run()
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
	if err != nil {
		return b.buildError(stderr.String(), err, src, ref.Modules)
	}
	if err := os.Rename(filepath.Join(dir, "ref.tmp"), ref.Path); err != nil {
		return fmt.Errorf("reference build: %v", err)
	}
	meta, _ := json.MarshalIndent(map[string]any{
		"binary": b.Path, "goVersion": b.GoVersion, "toolchain": ref.Toolchain, "modules": ref.Modules,
		"packages": ref.Packages, "kept": len(kept), "fetched": ref.Fetched, "seconds": time.Since(start).Seconds(),
	}, "", "  ")
	os.WriteFile(filepath.Join(dir, "meta.json"), append(meta, '\n'), 0o644)
	if o.Log != nil {
		fmt.Fprintf(o.Log, "goref: built %s in %.1fs\n", ref.Path, time.Since(start).Seconds())
	}
	return nil
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

// goMod pins every dependency at the binary's version.
func (b *Origin) goMod(toolchain string, dirs map[string]string) string {
	var sb strings.Builder
	sb.WriteString("// Generated by binscope: a reference build of the packages a binary without DWARF was built from.\nmodule binscope.local/ref\n\n")
	fmt.Fprintf(&sb, "go %s\n\n", goLine(b.GoVersion, toolchain))
	var req, rep []string
	if d, ok := dirs[b.Main.Path]; ok && b.Main.Path != "" {
		req = append(req, b.Main.Path+" v0.0.0")
		rep = append(rep, b.Main.Path+" => "+d)
	}
	for _, d := range b.Deps {
		dir, named := dirs[d.Path]
		switch {
		case named:
			req = append(req, d.Path+" "+d.Version)
			rep = append(rep, d.Path+" => "+dir)
		case d.Replace != nil && d.Replace.Version == "":
			// A directory of the original build: not to be had.
		case d.Replace != nil:
			req = append(req, d.Path+" "+d.Version)
			rep = append(rep, d.Path+" "+d.Version+" => "+d.Replace.Path+" "+d.Replace.Version)
		default:
			req = append(req, d.Path+" "+d.Version)
		}
	}
	if len(req) > 0 {
		sb.WriteString("require (\n\t" + strings.Join(req, "\n\t") + "\n)\n")
	}
	if len(rep) > 0 {
		sb.WriteString("\nreplace (\n\t" + strings.Join(rep, "\n\t") + "\n)\n")
	}
	return sb.String()
}

// goSum holds the checksums the build info recorded: the go command
// checks the source it gets against them, so the reference is built from
// the source the binary was.
func (b *Origin) goSum(dirs map[string]string) string {
	var sb strings.Builder
	for _, d := range b.Deps {
		if _, ok := dirs[d.Path]; ok {
			continue
		}
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		if m.Version != "" && strings.HasPrefix(m.Sum, "h1:") {
			fmt.Fprintf(&sb, "%s %s %s\n", m.Path, m.Version, m.Sum)
		}
	}
	return sb.String()
}

// goLine is the go directive: the older of the binary's language version
// and the toolchain's.
func goLine(binary, toolchain string) string {
	a, b := minor(binary), minor(toolchain)
	if a == 0 || b != 0 && b < a {
		a = b
	}
	if a == 0 {
		a = 21
	}
	return fmt.Sprintf("1.%d", a)
}

func minor(v string) int {
	v = strings.TrimPrefix(v, "go")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 || parts[0] != "1" {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	return n
}

// mainGo imports the packages and keeps the functions.
func mainGo(ref *Ref, kept []string) string {
	var sb strings.Builder
	sb.WriteString("// Code generated by binscope; DO NOT EDIT.\n\n")
	sb.WriteString("// Command ref imports the packages a binary was built from and keeps the\n// functions its probes name, so that its DWARF describes their types and\n// signatures.\npackage main\n\nimport (\n\t_ \"unsafe\"\n\n")
	for _, p := range ref.Packages {
		fmt.Fprintf(&sb, "\t_ %q\n", p)
	}
	sb.WriteString(")\n\n")
	for i, k := range kept {
		fmt.Fprintf(&sb, "//go:linkname keep%d %s\nfunc keep%d()\n\n", i, k, i)
	}
	sb.WriteString("var kept = []func(){")
	for i := range kept {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "keep%d", i)
	}
	sb.WriteString("}\n\nfunc main() { println(len(kept)) }\n")
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
	return fmt.Errorf("%s: reference build failed in %s: %s", b.Path, src, line)
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
