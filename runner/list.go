package runner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/binscope/binscope/code"
	"github.com/binscope/binscope/funcview"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/naming"
	"github.com/binscope/binscope/types"
	"github.com/binscope/binscope/usdt"
)

// ListOptions say what goprobe list lists: the probe points of Exe (or
// of PID's executable, and the USDT probes of the libraries it maps).
type ListOptions struct {
	Options
	Pattern string // a shell pattern, or a part of the names
	Verbose bool   // prototypes, and USDT probes' arguments
}

// List prints the probe points of the file, from the model of code and
// the file's USDT notes (see funcview.WritePoints); with -p, the USDT
// probes of every library the process maps too. A LIB:PATTERN lists the
// points of that library (see cutLibrary). Errors: a usage error
// without a file or a process; a pattern that matches nothing; the
// loaders'.
func List(o *ListOptions) error {
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
	ef, err := elfx.Open(target)
	if err != nil {
		return err
	}
	defer ef.Close()
	ps, err := usdt.Read(ef)
	if err != nil && !errors.Is(err, usdt.ErrNoProbes) {
		return err
	}
	var m *code.Model // only USDT probes: no functions to read
	if !strings.HasPrefix(o.Pattern, "usdt:") {
		if m, err = code.Open(target, &code.Options{Params: o.Verbose}); err != nil {
			return err
		}
		defer m.Close()
	}
	pts := &funcview.Points{Pattern: o.Pattern, Verbose: o.Verbose}
	n := funcview.WritePoints(o.Stdout, m, ps, pts)
	if o.PID > 0 {
		for _, lib := range mappedFiles(o.PID, target) {
			ef, err := elfx.Open(lib)
			if err != nil {
				continue // a mapping that is no ELF file (a font, a locale archive)
			}
			ps, _ := usdt.Read(ef)
			ef.Close()
			n += funcview.WriteUSDT(o.Stdout, ps, &funcview.Points{Pattern: o.Pattern, Verbose: o.Verbose, Library: lib})
		}
	}
	if n == 0 && o.Pattern != "" {
		near := ""
		if m != nil {
			names := types.Closest(m.Names(), o.Pattern, 5)
			if pat := naming.NewPattern(o.Pattern); pat.Wild() {
				names = types.Nearest(m.Names(), 5, pat.Near)
			}
			if len(names) > 0 {
				near = " (closest: " + strings.Join(names, ", ") + ")"
			}
		}
		return fmt.Errorf("%s: no function, USDT probe or source file matches %q%s", target, o.Pattern, near)
	}
	return nil
}
