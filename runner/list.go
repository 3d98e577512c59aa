package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/funcview"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/naming"
	"github.com/binscope/binscope/types"
	"github.com/binscope/binscope/usdt"
)

// ListOptions say what goprobe list lists: the probe points of Exe (or
// of PID's executable, and those of the libraries it maps).
type ListOptions struct {
	Options
	Pattern string // a shell pattern, or a part of the names
	Verbose bool   // prototypes, and USDT probes' arguments
}

// List prints the probe points of the file, from the model of code and
// the file's USDT notes (see funcview.WritePoints); with -p, those of
// every library the process maps too (each line saying the library); an
// Exe that is a shell pattern naming no file lists every file it
// matches, each line saying its file. A LIB:PATTERN lists the points of
// that library (see cutLibrary). Errors: a usage error without a file or
// a process; a pattern that matches nothing; the loaders'.
func List(o *ListOptions) error {
	if files, ok := exeFiles(o.Exe); ok && o.PID == 0 {
		n := 0
		for _, f := range files {
			k, _, err := o.listFile(f, f)
			if err != nil {
				return err
			}
			n += k
		}
		if n == 0 {
			return fmt.Errorf("%s: no function, USDT probe or source file matches %q in %d files", o.Exe, o.Pattern, len(files))
		}
		return nil
	}
	target, err := o.probeTarget()
	if err != nil {
		return err
	}
	if _, rest, ok := cutLibrary(o.Pattern); ok {
		// LIB:PATTERN: the functions of the library the process maps
		// (or the binary loads) that definitions name so.
		o.Defs = []string{o.Pattern}
		if target, err = o.libraryTarget(target); err != nil {
			return err
		}
		o.Pattern, o.PID = rest, 0
	}
	n, names, err := o.listFile(target, "")
	if err != nil {
		return err
	}
	if o.PID > 0 {
		for _, lib := range mappedFiles(o.PID, target) {
			k, _, err := o.listFile(lib, lib)
			if err == nil {
				n += k
			} // else a mapping that is no ELF file (a font, a locale archive)
		}
	}
	if n == 0 && o.Pattern != "" {
		near := ""
		if len(names) > 0 {
			near = " (closest: " + strings.Join(closestNames(names, o.Pattern), ", ") + ")"
		}
		return fmt.Errorf("%s: no function, USDT probe or source file matches %q%s", target, o.Pattern, near)
	}
	return nil
}

// exeFiles are the files a shell pattern names when no file is named so
// ("./bin/app*"); ok is false for a file's name.
func exeFiles(exe string) (files []string, ok bool) {
	if !strings.ContainsAny(exe, "*?[") {
		return nil, false
	}
	if _, err := os.Stat(exe); err == nil {
		return nil, false
	}
	ms, _ := filepath.Glob(exe)
	for _, m := range ms {
		if st, err := os.Stat(m); err == nil && st.Mode().IsRegular() {
			files = append(files, m)
		}
	}
	return files, true
}

// listFile lists the probe points of path that o picks, each saying lib
// when it is not "", and returns how many, with the names of its
// functions (for the closest to a pattern that matched nothing).
func (o *ListOptions) listFile(path, lib string) (int, []string, error) {
	ef, err := elfx.Open(path)
	if err != nil {
		return 0, nil, err
	}
	defer ef.Close()
	ps, err := usdt.Read(ef)
	if err != nil && !errors.Is(err, usdt.ErrNoProbes) {
		return 0, nil, err
	}
	var m *code.Model // only USDT probes: no functions to read
	if !strings.HasPrefix(o.Pattern, "usdt:") {
		if m, err = code.Open(path, &code.Options{Params: o.Verbose}); err != nil {
			return 0, nil, err
		}
		defer m.Close()
	}
	n := funcview.WritePoints(o.Stdout, m, ps, &funcview.Points{Pattern: o.Pattern, Verbose: o.Verbose, Library: lib})
	if m == nil {
		return n, nil, nil
	}
	return n, m.Names(), nil
}

// closestNames are the five names nearest a pattern.
func closestNames(names []string, pattern string) []string {
	if pat := naming.NewPattern(pattern); pat.Wild() {
		return types.Nearest(names, 5, pat.Near)
	}
	return types.Closest(names, pattern, 5)
}
