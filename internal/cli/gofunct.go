package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/types"
)

// Gofunct runs gofunct with args (without the program name) and returns
// the exit status.
func Gofunct(args []string, stdout, stderr io.Writer) int {
	return execute(gofunctCommand(stdout), args, stdout, stderr)
}

type functFlags struct {
	names     []string
	inline    bool
	sizes     bool
	externals bool
	json      bool
}

func gofunctCommand(stdout io.Writer) *cobra.Command {
	var f functFlags
	cmd := &cobra.Command{
		Use:   "gofunct [flags] FILE",
		Short: "List the functions of Go, Rust, Zig, C and C++ binaries with their inline expansions and clones",
		Long: `gofunct lists the functions of an ELF binary from its DWARF, joined with the
symbol table: names as their language writes them, addresses and sizes, where
each function was inlined (caller, entry address, ranges, call file, line and
column) and the compiler clones cut from it (.part, .cold, .isra, .constprop).`,
		Example: `  gofunct ./app
  gofunct --inline -f 'main.(*acc).add' ./app
  gofunct --json ./prog`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runFunct(&f, args[0], stdout)
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringArrayVarP(&f.names, "function", "f", nil, "show just these functions (repeatable, comma-separated)")
	fl.BoolVarP(&f.inline, "inline", "i", false, "show every inline expansion of each function (pfunct -i)")
	fl.BoolVarP(&f.sizes, "sizes", "s", false, "show name and size of each out-of-line function")
	fl.BoolVarP(&f.externals, "externals", "E", false, "show only external functions")
	fl.BoolVar(&f.json, "json", false, "print a JSON array, one object per function")
	addCompletion(cmd)
	return cmd
}

func runFunct(f *functFlags, path string, stdout io.Writer) error {
	df, err := dwarf.Open(path, nil)
	if err != nil {
		return err
	}
	defer df.Close()
	fns, err := df.Functions()
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, n := range splitList(f.names) {
		want[n] = true
	}
	var picked []*types.Func
	for _, fn := range fns {
		if len(want) > 0 && !want[fn.Name] && !want[fn.Linkage] {
			continue
		}
		if f.externals && !fn.External {
			continue
		}
		picked = append(picked, fn)
	}
	if len(want) > 0 && len(picked) == 0 {
		return fmt.Errorf("%s: no function named %s", path, splitList(f.names)[0])
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	defer w.Flush()
	if f.json {
		return writeFuncsJSON(w, picked)
	}
	for _, fn := range picked {
		switch {
		case f.sizes:
			if fn.LowPC != 0 {
				fmt.Fprintf(w, "%s: %d\n", fn.Name, fn.Size)
			}
		case f.inline:
			if len(fn.Inlined) == 0 {
				continue
			}
			fmt.Fprintf(w, "%s: %d inline expansions\n", fn.Name, len(fn.Inlined))
			for _, s := range fn.Inlined {
				fmt.Fprintf(w, "\tin %s at %s:%d:%d entry %#x", s.Caller, s.CallFile, s.CallLine, s.CallColumn, s.EntryPC)
				for _, r := range s.Ranges {
					fmt.Fprintf(w, " [%#x,%#x)", r[0], r[1])
				}
				fmt.Fprintln(w)
			}
		default:
			fmt.Fprintln(w, fn.Name)
		}
	}
	return nil
}

type funcJSON struct {
	Name        string        `json:"name"`
	LinkageName string        `json:"linkage_name,omitempty"`
	Lang        string        `json:"lang"`
	LowPC       uint64        `json:"low_pc"`
	Size        uint64        `json:"size"`
	File        string        `json:"file,omitempty"`
	Line        int           `json:"line,omitempty"`
	External    bool          `json:"external"`
	InlineSites []siteJSON    `json:"inline_sites"`
	Clones      []types.Clone `json:"clones"`
}

type siteJSON struct {
	Caller     string      `json:"caller"`
	EntryPC    uint64      `json:"entry_pc"`
	Ranges     [][2]uint64 `json:"ranges"`
	CallFile   string      `json:"call_file"`
	CallLine   int         `json:"call_line"`
	CallColumn int         `json:"call_column"`
}

func writeFuncsJSON(w io.Writer, fns []*types.Func) error {
	out := make([]funcJSON, 0, len(fns))
	for _, fn := range fns {
		j := funcJSON{Name: fn.Name, LinkageName: fn.Linkage, Lang: fn.Lang.String(), LowPC: fn.LowPC, Size: fn.Size,
			File: fn.Decl.File, Line: fn.Decl.Line, External: fn.External,
			InlineSites: []siteJSON{}, Clones: fn.Clones}
		if j.Clones == nil {
			j.Clones = []types.Clone{}
		}
		for _, s := range fn.Inlined {
			j.InlineSites = append(j.InlineSites, siteJSON(s))
		}
		out = append(out, j)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
