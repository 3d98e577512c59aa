package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/binscope/binscope/cmd/internal/command"
	"github.com/binscope/binscope/internal/usage"
	"github.com/binscope/binscope/runner"
)

func profileCommand(stdout, stderr io.Writer) *cobra.Command {
	o := &runner.ProfileOptions{Stdout: stdout, Stderr: stderr}
	cmd := &cobra.Command{
		Use:   "profile [-F HZ] [-p PID | -a | -- CMD ARGS...] [--folded FILE] [--svg FILE] [--pprof FILE]",
		Short: "Sample CPU stacks, unwound in the kernel from each binary's call frame information, into a flame graph",
		Long: `profile samples the CPUs HZ times a second and, in the BPF program, unwinds
the sampled process's user stack with tables compiled from each mapped file's
.eh_frame or .debug_frame (so code without frame pointers unwinds too) and its
kernel stack; identical stacks are counted in the kernel. At the end (the
command exits, or SIGINT) frames are named from DWARF with their inline
expansions, or from .gopclntab and symbols, and printed as a top-N table, a
folded file (--folded) and an interactive SVG flame graph (--svg).`,
		Example: `  goprobe profile --svg app.svg -- ./app
  goprobe profile -F 999 -p 1234 --folded app.folded
  goprobe profile -a --svg all.svg   (every process, until SIGINT)`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if d := cmd.ArgsLenAtDash(); d > 0 {
				return usage.Errorf("unexpected arguments before --: %v", args[:d])
			} else if d < 0 && len(args) > 0 {
				return usage.Errorf("unexpected arguments %v (the command goes after --)", args)
			}
			o.Run = args
			return command.Exit(runner.Profile(o))
		},
	}
	fl := cmd.Flags()
	fl.IntVarP(&o.Hz, "freq", "F", 99, "samples per second and CPU")
	fl.IntVarP(&o.PID, "pid", "p", 0, "profile this process")
	fl.BoolVarP(&o.All, "all", "a", false, "profile every process (frame pointers only for processes not named)")
	fl.StringVar(&o.Folded, "folded", "", "write the stacks in the folded format (main;outer;inner 123) to FILE")
	fl.StringVar(&o.SVG, "svg", "", "write an interactive flame graph to FILE")
	fl.StringVar(&o.Pprof, "pprof", "", "write the profile as pprof's protobuf to FILE (go tool pprof FILE)")
	fl.IntVar(&o.Top, "top", 15, "functions to list by samples (0: none)")
	fl.StringVar(&o.Color, "color", "lang", "flame graph colours by lang or module")
	fl.StringVar(&o.Title, "title", "", "flame graph title")
	return cmd
}

func serveCommand(stderr io.Writer) *cobra.Command {
	o := &runner.ServeOptions{Stderr: stderr}
	cmd := &cobra.Command{
		Use:   "serve [--listen ADDR] FILE",
		Short: "Run as an agent: attach the probes a file names to every process running their binaries, now and later, and serve their metrics",
		Long: `serve reads FILE, a JSON object:

  {"listen": "127.0.0.1:9464", "max_label_sets": 500, "probes": [
    {"binary": "/usr/local/bin/app", "probe": "main.(*server).handle", "metric": "app_requests_total"},
    {"binary": "/usr/local/bin/app", "key": "c->desc->fqName", "label": "name",
     "probe": "github.com/prometheus/client_golang/prometheus.(*counter).Inc", "metric": "app_counter_incs_total"},
    {"binary": "/usr/local/bin/app", "probe": "main.write", "key": "fd", "value": "n", "metric": "app_write_bytes"}]}

and serves the probes' counts, keyed counts and log2 histograms at
http://ADDR/metrics. Probes sit on the binary's file, so every process
running it is counted, including those started later; a binary that is not
there yet is attached when it appears, and one replaced on disk (a deploy)
is probed again, its counts carried over. SIGHUP reads FILE again: probes
whose entry did not change keep their counts.`,
		Args: command.Args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File = args[0]
			return runner.Serve(o)
		},
	}
	cmd.Flags().StringVar(&o.Listen, "listen", "", "serve metrics at http://ADDR/metrics (default: the file's listen, else 127.0.0.1:9464)")
	cmd.Flags().IntVar(&o.MaxLabelSets, "max-label-sets", 0, "expose at most this many keys per probe (default: the file's, else 500)")
	return cmd
}
