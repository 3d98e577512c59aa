package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/binscope/binscope/cmd/internal/command"
	"github.com/binscope/binscope/metric"
	"github.com/binscope/binscope/probe"
	"github.com/binscope/binscope/runner"
	"github.com/binscope/binscope/unwind"
)

// goprobe runs goprobe with args (without the program name) and returns
// the exit status.
func goprobe(args []string, stdout, stderr io.Writer) int {
	root := &cobra.Command{
		Use:   "goprobe",
		Short: "Probe Go, Rust, Zig and C programs: every call, inlined or not, with its arguments",
		Long: `goprobe resolves probe definitions against a binary's DWARF: a definition
fires once per call, so it becomes a uprobe site at the function's out-of-line
copy, at every inline expansion and at every full compiler clone (every RET
for %return), each with its own programs to read the arguments.

Definitions: PROBE [/FILTER/] [ARG...], PROBE one of
FUNC[%return] | FUNC:LINE | FUNC+OFFSET | usdt:PROVIDER:NAME,
FUNC, PROVIDER and NAME may hold wildcards ('main.*', 'ns::Tmpl<*>::get',
'*alloc*', 'usdt:*:function__*'; '*' any text, '?' one character): one
probe per function or USDT probe matched (see --max-sites, --missing-probes),
then arguments [NAME=]EXPR[:TYPE], EXPR being a parameter or variable,
$params, $retval or %REG followed by ->field, .field and [N] (a USDT probe's:
arg0, arg1, ... or $params), or a builtin: $pid $tid $comm $cpu $ts $uid
$gid; TYPE one of u8..u64, s8..s64, x8..x64, f32, f64, string, bytes.
FILTER is evaluated in BPF before a hit counts, as bpftrace's predicates:
C's operators (|| && | ^ & == != < <= > >= << >> + - * / % ! - ~) over
arguments, numbers and "text" ('hit /x > 3 && tag == "red"/'); --filter
gives one to every definition.`,
		Args: command.Args(cobra.NoArgs),
	}
	root.AddCommand(genCommand(stdout, stderr), traceCommand(stdout, stderr, false), traceCommand(stdout, stderr, true),
		histCommand(stdout, stderr), profileCommand(stdout, stderr), serveCommand(stderr), cacheCommand(stdout),
		listCommand(stdout, stderr))
	command.AddCompletion(root)
	command.AddDebugInfo(root)
	return command.Execute(root, args, stdout, stderr)
}

// split separates the definitions from the command after "--".
func split(cmd *cobra.Command, args []string) (defs, run []string) {
	if d := cmd.ArgsLenAtDash(); d >= 0 {
		return args[:d], args[d:]
	}
	return args, nil
}

// addTarget adds the flags that name what to probe.
func addTarget(fl *pflag.FlagSet, o *runner.Options) {
	fl.StringVarP(&o.Exe, "exe", "x", "", "the binary to probe, or a shell pattern naming several (default: CMD's, or /proc/PID/exe)")
	fl.IntVarP(&o.PID, "pid", "p", 0, "probe only this process")
}

// addMatchFlags adds the flags for definitions that name several places
// (wildcards) or none.
func addMatchFlags(fl *pflag.FlagSet, m *runner.Matching) {
	fl.IntVar(&m.MaxSites, "max-sites", probe.DefaultMaxSites, "attach at most this many sites for wildcard definitions (-1: no bound)")
	fl.StringVar(&m.Missing, "missing-probes", "error", "a definition that names nothing or cannot be probed: error, warn (and go on without it) or ignore")
	fl.StringVar(&m.Filter, "filter", "", "count and record only the hits where this predicate holds, evaluated in BPF: 'x > 3 && $pid == 1234', 'name == \"GET\"' (besides a definition's own /PRED/)")
}

// addStopFlags adds the flags that stop a run by itself (bpftrace's
// exit()): the probes detach, the counts print, the process runs on.
func addStopFlags(fl *pflag.FlagSet, s *runner.Stop) {
	fl.Uint64VarP(&s.Count, "count", "n", 0, "stop after this many hits (a command goprobe started runs on to its end, unprobed)")
	fl.DurationVar(&s.Duration, "duration", 0, "stop after this time (5s, 2m)")
}

func traceCommand(stdout, stderr io.Writer, stat bool) *cobra.Command {
	o := &runner.TraceOptions{Options: runner.Options{Stdout: stdout, Stderr: stderr}, Stat: stat, Metrics: &runner.MetricOptions{}}
	use, short := "trace [flags] 'PROBE [ARG...]'... [-- CMD ARGS...]", "Print one line per hit with the probe's arguments"
	example := `  goprobe trace -x ./app 'main.(*acc).add v a->n'
  goprobe trace --json 'maybe_alloc n' -- ./prog 10
  goprobe trace -n 5 -p 4242 'malloc size'
  goprobe trace --spec app.spec.json -x ./app.stripped -- ./app.stripped
  goprobe trace --bpf-obj counter.bpf.o --btf app.btf -- ./app`
	if stat {
		use, short = "stat [flags] 'PROBE'... [-- CMD ARGS...]", "Count the hits of each probe and print the counts at exit"
		example = `  goprobe stat 'main.work' 'main.twice' -- ./app
  goprobe stat --duration 10s --interval 1s -p 4242 'malloc'`
	}
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Example: example,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Defs, o.Run = split(cmd, args)
			return command.Exit(runner.Trace(o))
		},
	}
	fl := cmd.Flags()
	addTarget(fl, &o.Options)
	addStopFlags(fl, &o.Stop)
	addMatchFlags(fl, &o.Matching)
	fl.StringVar(&o.SpecFile, "spec", "", "take the probes from a spec made by goprobe gen --format=spec (no debug info needed)")
	fl.StringVar(&o.Object.Object, "bpf-obj", "", "run this compiled program of goprobe gen --format=bpf-c --core instead of goprobe's own, with the probes it was made for, its fields relocated against the target's types")
	fl.StringVar(&o.Object.BTF, "btf", "", "with --bpf-obj: the target's BTF (gopahole --btf_encode_detached FILE BINARY); default: encoded from the target's DWARF")
	fl.BoolVar(&o.JSON, "json", false, "print JSON lines (trace) or a JSON object (stat)")
	if stat {
		fl.BoolVar(&o.Stacks, "stacks", false, "count the hits per distinct user stack, unwound in the kernel")
		fl.StringVar(&o.Folded, "folded", "", "with --stacks: write the stacks in the folded format to FILE")
		fl.DurationVar(&o.Interval, "interval", 0, "also print the counts so far at this interval")
		addMetricFlags(fl, o.Metrics, false)
	} else {
		fl.BoolVar(&o.Stack, "stack", false, "add the user stack, unwound in the kernel, to each event")
		fl.StringVar(&o.StackFormat, "stack-format", "", "with --stack: print each frame as names (default), lines (function file:line), raw (address) or build-id (build-id+file offset)")
	}
	fl.IntVar(&o.StackDepth, "stack-depth", 0, fmt.Sprintf("with --stack or --stacks: unwind at most N frames, 1 to %d (default %d, as perf)", unwind.SiteDepth, unwind.SiteDepth))
	return cmd
}

// addMetricFlags adds the flags of stat and hist that expose their counts
// as Prometheus metrics.
func addMetricFlags(fl *pflag.FlagSet, m *runner.MetricOptions, hist bool) {
	fl.StringVar(&m.Listen, "listen", "", "serve Prometheus metrics at http://ADDR/metrics (PORT or :PORT listen on 127.0.0.1 only)")
	fl.StringArrayVar(&m.Names, "metric", nil, "the metric's name, one per probe in order (default goprobe_FUNC_calls_total)")
	fl.StringArrayVar(&m.Helps, "metric-help", nil, "the metric's help text, one per probe in order")
	fl.IntVar(&m.MaxLabelSets, "max-label-sets", metric.DefaultMaxLabelSets, "with --listen: expose at most this many keys per probe; the rest are counted as dropped")
	if hist {
		fl.StringVar(&m.Label, "label", "", "the key's label name (default: the key expression's last field in snake_case)")
	}
}

func histCommand(stdout, stderr io.Writer) *cobra.Command {
	o := &runner.HistOptions{Options: runner.Options{Stdout: stdout, Stderr: stderr}, Metrics: &runner.MetricOptions{}}
	cmd := &cobra.Command{
		Use:   "hist --key EXPR [--value EXPR] [flags] 'PROBE'... [-- CMD ARGS...]",
		Short: "Count hits per key in the kernel, with the sum and log2 histogram of a value",
		Long: `goprobe hist aggregates in the kernel, as ftrace's hist triggers do: each hit of a
probe adds one to the count of its key (--key, an argument expression read at
the hit) and, with --value, the value to the key's sum and log2 histogram. The
table is printed at exit, and every --interval.`,
		Example: `  goprobe hist --key n --value i maybe_alloc -- ./prog 10
  goprobe hist --key c->desc->fqName 'github.com/prometheus/client_golang/prometheus.(*counter).Inc' -- ./app`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Defs, o.Run = split(cmd, args)
			return command.Exit(runner.Hist(o))
		},
	}
	fl := cmd.Flags()
	addTarget(fl, &o.Options)
	addStopFlags(fl, &o.Stop)
	addMatchFlags(fl, &o.Matching)
	fl.StringVar(&o.Key, "key", "", "the expression to group hits by (required)")
	fl.StringVar(&o.Value, "value", "", "an expression to sum and histogram per key")
	fl.DurationVar(&o.Interval, "interval", 0, "also print the table at this interval")
	fl.BoolVar(&o.JSON, "json", false, "print a JSON object")
	addMetricFlags(fl, o.Metrics, true)
	return cmd
}
