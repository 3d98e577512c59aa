package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/binscope/binscope/internal/usage"
	"github.com/binscope/binscope/layout"
	"github.com/binscope/binscope/loader"
	"github.com/binscope/binscope/types"
)

// paholeRelease is the pahole release whose output and options gopahole
// reproduces (its tests compare with it): --version prints it, as scripts
// that check pahole's version read it.
const paholeRelease = 124

// compatFlags are pahole's options beyond the layouts' own.
type compatFlags struct {
	compile          bool
	dataOnly         bool
	quiet            bool
	packed           bool
	flexible         bool
	embeddedFlexible bool
	firstObjOnly     bool
	cuExclude        string
	declExclude      string
	nrMembers        bool
	nameLen          bool
	sort             bool
	separator        string
	enumerator       string
	expandPointers   bool
	noAligned        bool
	noPacked         bool
	noForcePaddings  bool
	fixSilly         bool
	flatArrays       bool
	classesAsStructs bool
	nestedAnon       bool
	reorgSteps       bool
	showVersion      bool
	numericVersion   bool
	develVersion     bool
	private          bool
	definedIn        bool
	nrDefinitions    bool
	nrMethods        bool
	tableStats       bool
	skipAtomic       bool
}

func addCompatFlags(cmd *cobra.Command, f *paholeFlags) {
	c := &f.compat
	fl := cmd.Flags()
	fl.BoolVar(&c.compile, "compile", false, "print compilable C: the chosen types and their dependencies (--format=c)")
	fl.BoolVarP(&c.dataOnly, "show_only_data_members", "M", false, "show only the members that take room: no C++ member functions")
	fl.BoolVarP(&c.quiet, "quiet", "q", false, "leave out the comments: offsets, sizes, holes, the trailer")
	fl.BoolVar(&c.packed, "packed", false, "show only packed types")
	fl.BoolVar(&c.flexible, "with_flexible_array", false, "show only types ending in a flexible array")
	fl.BoolVar(&c.embeddedFlexible, "with_embedded_flexible_array", false, "show only structs holding a struct that ends in a flexible array")
	fl.BoolVar(&c.firstObjOnly, "first_obj_only", false, "read only the first compile unit of each file")
	fl.StringVarP(&c.cuExclude, "cu_exclude", "X", "", "leave out the DWARF compile units whose names start with PREFIX")
	fl.StringVarP(&c.declExclude, "decl_exclude", "D", "", "leave out the types declared in files whose names start with PREFIX")
	fl.BoolVarP(&c.nrMembers, "nr_members", "n", false, "show the name and number of members of each type")
	fl.BoolVarP(&c.nameLen, "class_name_len", "N", false, "show the name and its length of each type")
	fl.BoolVar(&c.sort, "sort", false, "print the types in the order of their names")
	fl.StringVarP(&c.separator, "separator", "t", "", "field separator of -s, -P, -n and -N rows (default: a tab)")
	fl.StringVar(&c.enumerator, "contains_enumerator", "", "show the enums that have an enumerator NAME")
	fl.BoolVarP(&c.expandPointers, "expand_pointers", "p", false, "expand the structs members point to")
	fl.BoolVar(&c.noAligned, "suppress_aligned_attribute", false, "leave out __attribute__((__aligned__(N)))")
	fl.BoolVar(&c.noPacked, "suppress_packed", false, "leave out __attribute__((__packed__))")
	fl.BoolVar(&c.noForcePaddings, "suppress_force_paddings", false, "leave out the guessed bitfields of tail padding (\"Force padding:\")")
	fl.BoolVar(&c.fixSilly, "fixup_silly_bitfields", false, "show a bitfield as wide as its type (int x:32) as a plain member")
	fl.BoolVar(&c.flatArrays, "flat_arrays", false, "show a[3][4] as a[12]")
	fl.BoolVar(&c.classesAsStructs, "classes_as_structs", false, "print the keyword struct for C++ classes")
	fl.BoolVarP(&c.nestedAnon, "nested_anon_include", "A", false, "with -a, anonymous types nested in others too (as -a alone does)")
	fl.BoolVarP(&c.reorgSteps, "show_reorg_steps", "S", false, "with -R, show the layout before reorganizing, then after")
	fl.BoolVar(&c.showVersion, "version", false, "print the pahole release gopahole follows, as v1.24")
	fl.BoolVar(&c.numericVersion, "numeric_version", false, "print the pahole release gopahole follows, as 124")
	fl.BoolVar(&c.develVersion, "devel_version", false, "as --version")
	fl.StringVar(&f.prettify.header, "header_type", "", "as --header")
	fl.BoolVar(&c.private, "show_private_classes", false, "show the classes defined inside other classes too (not those inside functions)")
	fl.BoolVarP(&c.definedIn, "defined_in", "u", false, "show the compile units that define the types -C names")
	fl.BoolVarP(&c.nrDefinitions, "nr_definitions", "T", false, "show the name of each struct, class and union and how many compile units define it")
	fl.BoolVarP(&c.nrMethods, "nr_methods", "m", false, "show, for each struct, how many functions take a pointer to it")
	fl.BoolVar(&c.tableStats, "ptr_table_stats", false, "print, on stderr, how many types of each kind were loaded")
	fl.BoolVar(&c.skipAtomic, "skip_emitting_atomic_typedefs", false, "with --compile, no typedef for the atomic_ types <stdatomic.h> defines (atomic_int...)")
}

// counts answers -T, -u and -m, which count or list what defines and uses
// each type, and reports whether one was asked.
func (c *compatFlags) counts(w io.Writer, paths []string, sel *layout.Selection) (bool, error) {
	switch {
	case c.definedIn && len(sel.Classes) == 0:
		return true, usage.Errorf("-u: name the types with -C")
	case c.definedIn, c.nrDefinitions:
		return true, c.definitions(w, paths, sel)
	case c.nrMethods:
		return true, c.methods(w, paths)
	}
	return false, nil
}

// definitions prints the compile units defining each -C type (-u), or
// every type's name and how many units define it (-T).
func (c *compatFlags) definitions(w io.Writer, paths []string, sel *layout.Selection) error {
	var names []string
	n := map[string]int{}
	units := map[string][]string{}
	for _, p := range paths {
		defs, err := loader.Definitions(p, &loader.TypesOptions{ExcludeUnits: c.cuExclude, FirstUnit: c.firstObjOnly})
		if err != nil {
			return err
		}
		for _, d := range defs {
			if n[d.Name] == 0 {
				names = append(names, d.Name)
			}
			n[d.Name]++
			if !slices.Contains(units[d.Name], d.Unit) {
				units[d.Name] = append(units[d.Name], d.Unit)
			}
		}
	}
	if c.definedIn {
		for _, want := range sel.Classes {
			for _, name := range names {
				if name == want || types.ShortName(name) == want {
					for _, u := range units[name] {
						fmt.Fprintln(w, u)
					}
				}
			}
		}
		return nil
	}
	for _, name := range names {
		fmt.Fprintf(w, "%s%s%d\n", name, c.sep(), n[name])
	}
	return nil
}

func (c *compatFlags) sep() string {
	if c.separator == "" {
		return "\t"
	}
	return c.separator
}

// methods prints, for each struct, class or union that a function takes
// a pointer to, how many functions do (pahole's -m), in the order the
// functions first name them.
func (c *compatFlags) methods(w io.Writer, paths []string) error {
	var names []string
	n := map[string]int{}
	for _, p := range paths {
		code, err := loader.OpenCode(p, &loader.CodeOptions{Params: true, SpelledParams: true})
		if err != nil {
			return err
		}
		for _, fn := range code.Funcs() {
			seen := map[string]bool{}
			for _, prm := range fn.Params {
				ptr, ok := types.Unqualified(prm.Type).(*types.Pointer)
				if !ok {
					continue
				}
				st, ok := types.Resolve(ptr.Target).(*types.Struct)
				if !ok || st.Name == "" || seen[st.Name] {
					continue
				}
				seen[st.Name] = true
				if n[st.Name] == 0 {
					names = append(names, st.Name)
				}
				n[st.Name]++
			}
		}
		code.Close()
	}
	for _, name := range names {
		fmt.Fprintf(w, "%s%s%d\n", name, c.sep(), n[name])
	}
	return nil
}

// tableCounts prints how many types of each kind spec holds (the
// nearest thing to pahole's --ptr_table_stats, which reports its own
// tables).
func tableCounts(w io.Writer, spec *types.Spec) {
	var structs, unions, classes, enums, typedefs, other int
	for _, t := range spec.Types() {
		switch v := t.(type) {
		case *types.Struct:
			switch v.Kind {
			case types.KindUnion:
				unions++
			case types.KindClass:
				classes++
			default:
				structs++
			}
		case *types.Enum:
			enums++
		case *types.Typedef:
			typedefs++
		default:
			other++
		}
	}
	fmt.Fprintf(w, "%s: %d named types: %d structs, %d classes, %d unions, %d enums, %d typedefs, %d others\n",
		spec.Path, spec.Len(), structs, classes, unions, enums, typedefs, other)
}

// version prints what --version, --numeric_version or --devel_version
// asks, and reports whether one did.
func (c *compatFlags) version(w io.Writer) (bool, error) {
	var err error
	switch {
	case c.numericVersion:
		_, err = fmt.Fprintf(w, "%d\n", paholeRelease)
	case c.showVersion || c.develVersion:
		_, err = fmt.Fprintf(w, "v%d.%d\n", paholeRelease/100, paholeRelease%100)
	default:
		return false, nil
	}
	return true, err
}

func (f *paholeFlags) count() layout.Count {
	c := &f.compat
	switch {
	case c.nrMembers:
		return layout.CountMembers
	case c.nameLen:
		return layout.CountNameLen
	case f.holeSize > 0 && !f.sizes:
		return layout.CountName // pahole's -z prints the names alone
	}
	return layout.CountNone
}

// inputs are the files named, each directory replaced by the ELF files
// under it (in lexical order).
func inputs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			out = append(out, a) // the loader says what is wrong with it
			continue
		}
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() && isELF(p) {
				out = append(out, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if len(args) > 0 && len(out) == 0 {
		return nil, fmt.Errorf("%s: no ELF file in it: name a binary, an object file or a directory holding some", strings.Join(args, ", "))
	}
	return out, nil
}

func isELF(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && string(magic[:]) == "\x7fELF"
}

// classList replaces each file://PATH among names by the names PATH
// lists, one a line (pahole's -C file://).
func classList(names []string) ([]string, error) {
	var out []string
	for _, n := range names {
		path, ok := strings.CutPrefix(n, "file://")
		if !ok {
			out = append(out, n)
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, usage.Errorf("-C %s: %v", n, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
				out = append(out, line)
			}
		}
	}
	return out, nil
}

// loadMany reads the types of every path into one spec: a named type
// comes from the first file that has one of that name and size.
func loadMany(paths []string, lo *loader.TypesOptions) (*types.Spec, error) {
	var merged *types.Spec
	for _, p := range paths {
		spec, _, err := loader.Types(p, lo)
		if err != nil {
			return nil, err
		}
		if merged == nil {
			merged = &types.Spec{Path: spec.Path, Format: spec.Format, Arch: spec.Arch, PointerSize: spec.PointerSize, Lang: spec.Lang, Producer: spec.Producer}
		}
		for _, t := range spec.Types() {
			if !seenAs(merged, t) {
				merged.Add(t)
			}
		}
	}
	return merged, nil
}

// seenAs reports whether spec holds a type of t's name and size already
// (the same type from another file; one of another size is another type
// of that name, which pahole shows too).
func seenAs(spec *types.Spec, t types.Type) bool {
	n := t.TypeName()
	if n == "" {
		return false
	}
	size, _ := types.Sizeof(t)
	for _, o := range spec.Lookup(n) {
		if s, _ := types.Sizeof(o); s == size {
			return true
		}
	}
	return false
}

// runMany is runPahole over several files read as one.
func runMany(f *paholeFlags, sel *layout.Selection, paths []string, lo *loader.TypesOptions, w io.Writer, stderr io.Writer) error {
	named := *lo
	named.Names = nil // a name may be in any of the files
	spec, err := loadMany(paths, &named)
	if err != nil {
		return err
	}
	if f.output == "c" {
		picked, err := layout.Select(spec, sel)
		if err != nil {
			return err
		}
		return writeRoots(w, paths[0], spec, picked, f.compat.skipAtomic)
	}
	return f.report().Run(w, stderr, sel, strings.Join(paths, ", "), func(func(types.Type)) (*types.Spec, bool, error) {
		return spec, false, nil
	})
}

// writeEnumerators prints the enums that have an enumerator called name
// (--contains_enumerator), as pahole prints an enum.
func writeEnumerators(w io.Writer, paths []string, lo *loader.TypesOptions, name string) error {
	all := *lo
	all.Names = nil
	spec, err := loadMany(paths, &all)
	if err != nil {
		return err
	}
	for _, t := range spec.Types() {
		e, ok := t.(*types.Enum)
		if !ok {
			continue
		}
		for _, v := range e.Values {
			if v.Name == name {
				if err := layout.WriteDecl(w, e, nil); err != nil {
					return err
				}
				break
			}
		}
	}
	return nil
}
