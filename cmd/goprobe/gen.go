package cli

import (
	"bufio"
	"debug/elf"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/binscope/binscope/codegen"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/probe"
	"github.com/binscope/binscope/symtab"
)

// Goprobe runs goprobe with args (without the program name) and returns
// the exit status.
func Goprobe(args []string, stdout, stderr io.Writer) int {
	root := &cobra.Command{
		Use:   "goprobe",
		Short: "Probe Go, Rust, Zig and C programs: every call, inlined or not, with its arguments",
		Long: `goprobe resolves probe definitions against a binary's DWARF: a definition
fires once per call, so it becomes a uprobe site at the function's out-of-line
copy, at every inline expansion and at every full compiler clone (every RET
for %return), each with its own programs to read the arguments.

Definitions: FUNC[%return] | FUNC:LINE | FUNC+OFFSET, then arguments
[NAME=]EXPR[:TYPE], EXPR being a parameter or variable, $params, $retval or
%REG followed by ->field, .field and [N]; TYPE one of u8..u64, s8..s64,
x8..x64, f32, f64, string, bytes.`,
		Args: cobra.NoArgs,
	}
	root.AddCommand(genCommand(stdout), traceCommand(stdout, stderr, false), traceCommand(stdout, stderr, true), histCommand(stdout, stderr), profileCommand(stdout, stderr), serveCommand(stderr))
	addCompletion(root)
	return execute(root, args, stdout, stderr)
}

func genCommand(stdout io.Writer) *cobra.Command {
	var format, bin, target string
	cmd := &cobra.Command{
		Use:   "gen --format=FMT -x BINARY 'PROBE [ARG...]'...",
		Short: "Write the probes as a portable JSON spec, a libbpf-style BPF C program, a bpftrace script or perf probe commands",
		Example: `  goprobe gen --format=bpftrace -x ./app 'main.work' > work.bt && bpftrace work.bt -c ./app
  goprobe gen --format=spec -x ./app 'github.com/prometheus/client_golang/prometheus.(*counter).Add v:f64 c->valInt'
  goprobe gen --format=perf -x ./prog 'maybe_alloc n'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if bin == "" {
				return usageError{fmt.Errorf("-x BINARY is required")}
			}
			if format != "spec" && format != "bpftrace" && format != "perf" && format != "bpf-c" {
				return usageError{fmt.Errorf("--format %q: want spec, bpf-c, bpftrace or perf", format)}
			}
			var defs []*probe.Def
			for _, a := range args {
				d, err := probe.Parse(a)
				if err != nil {
					return err
				}
				defs = append(defs, d)
			}
			r, done, err := resolver(bin, defs)
			if err != nil {
				return err
			}
			defer done()
			spec, err := r.Spec(defs)
			if err != nil {
				return err
			}
			if target != "" {
				if err := sameBuild(target, spec.BuildID); err != nil {
					return err
				}
			}
			w := bufio.NewWriter(stdout)
			defer w.Flush()
			switch format {
			case "bpftrace":
				return codegen.WriteBpftrace(w, spec, bpftraceTarget(bin, target))
			case "perf":
				return codegen.WritePerf(w, spec)
			case "bpf-c":
				return codegen.WriteBPFC(w, spec, &codegen.BPFCOptions{Types: r.Types(defs)})
			}
			return probe.WriteSpec(w, spec)
		},
	}
	cmd.Flags().StringVar(&format, "format", "spec", "artifact: spec (portable JSON), bpf-c (libbpf-style program), bpftrace or perf")
	cmd.Flags().StringVarP(&bin, "exe", "x", "", "the binary whose debug info defines the probes")
	cmd.Flags().StringVar(&target, "target", "", "the file to attach to, when not BINARY: a stripped copy with the same build-id")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"spec", "bpf-c", "bpftrace", "perf"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// sameBuild refuses a target whose build-id is not the spec's.
func sameBuild(target, buildID string) error {
	ef, err := elfx.Open(target)
	if err != nil {
		return err
	}
	defer ef.Close()
	if ef.BuildID != buildID || buildID == "" {
		return fmt.Errorf("%s: build-id %q is not the probed binary's %q: the probes would land at wrong addresses", target, ef.BuildID, buildID)
	}
	return nil
}

// bpftraceTarget says where a bpftrace script attaches: a target without a
// symbol table (stripped) takes file offsets; one with a symbol table,
// symbols as bpftrace reads them from that file (not its debug file).
func bpftraceTarget(bin, target string) *codegen.BpftraceOptions {
	o := &codegen.BpftraceOptions{Target: target}
	path := bin
	if target != "" {
		path = target
	}
	ef, err := elfx.Open(path)
	if err != nil {
		return o
	}
	defer ef.Close()
	o.Library = isLibrary(ef)
	if ef.Section(".symtab") == nil && target != "" {
		o.FileOffsets = true
		return o
	}
	tab := symtab.Read(ef)
	o.Symbol = func(addr uint64) (codegen.Symbol, bool) {
		s, ok := tab.Covering(addr)
		if !ok {
			return codegen.Symbol{}, false
		}
		if at := tab.At(s.Addr); len(at) > 1 {
			s = symtab.Plainest(at)
		}
		return codegen.Symbol{Name: s.Name, Addr: s.Addr, Size: s.Size, Unique: len(tab.Named(s.Name)) == 1}, true
	}
	for _, name := range []string{"runtime.morestack.abi0", "runtime.morestack"} {
		if ms := tab.Named(name); len(ms) == 1 {
			o.Morestack = &codegen.Symbol{Name: name, Addr: ms[0].Addr, Size: ms[0].Size, Unique: true}
			break
		}
	}
	return o
}

// isLibrary reports whether ef is a shared library (it names itself with
// DT_SONAME), whose probes fire in every process that maps it.
func isLibrary(ef *elfx.File) bool {
	if ef.Type != elf.ET_DYN {
		return false
	}
	sonames, _ := ef.DynString(elf.DT_SONAME)
	return len(sonames) > 0
}
