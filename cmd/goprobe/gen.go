package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/binscope/binscope/cmd/internal/command"
	"github.com/binscope/binscope/internal/usage"
	"github.com/binscope/binscope/runner"
)

func genCommand(stdout, stderr io.Writer) *cobra.Command {
	o := &runner.GenOptions{Log: stderr}
	cache := false
	cmd := &cobra.Command{
		Use:   "gen --format=FMT -x BINARY 'PROBE [ARG...]'...",
		Short: "Write the probes as a portable JSON spec, a libbpf-style BPF C program, a bpftrace script or perf probe commands",
		Example: `  goprobe gen --format=bpftrace -x ./app 'main.work' > work.bt && bpftrace work.bt -c ./app
  goprobe gen --format=spec -x ./app 'github.com/prometheus/client_golang/prometheus.(*counter).Add v:f64 c->valInt'
  goprobe gen --format=perf -x ./prog 'maybe_alloc n'
  goprobe gen --format=bpf-c --core -x ./app 'github.com/prometheus/client_golang/prometheus.(*counter).Write c->valInt' > c.bpf.c
  goprobe gen --cache -x ./app.debug 'main.work n' && goprobe stat -- ./app.stripped`,
		Args: command.Args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Exe == "" {
				return usage.Errorf("-x BINARY is required")
			}
			o.Defs = args
			if cache {
				if cmd.Flags().Changed("format") || o.Target != "" {
					return usage.Errorf("--cache keeps the spec in the probe cache: give no --format or --target")
				}
				return runner.CachePut(o.Exe, o.Defs, nil, stderr)
			}
			return runner.Gen(stdout, o)
		},
	}
	cmd.Flags().StringVar(&o.Format, "format", "spec", "artifact: spec (portable JSON), bpf-c (libbpf-style program), bpftrace or perf")
	cmd.Flags().BoolVar(&o.CORE, "core", false, "with --format=bpf-c: read struct fields through CO-RE relocations, so that the one compiled object serves every build whose probes read the same fields (goprobe trace --bpf-obj OBJ loads it against the target's types)")
	cmd.Flags().StringVarP(&o.Exe, "exe", "x", "", "the binary whose debug info defines the probes")
	cmd.Flags().BoolVar(&cache, "cache", false, "keep the probes in the probe cache under BINARY's build-id (trace, stat and hist on any copy of that build find them; goprobe cache lists them)")
	cmd.Flags().StringVar(&o.Target, "target", "", "the file to attach to, when not BINARY: a stripped copy with the same build-id")
	addMatchFlags(cmd.Flags(), &o.Matching)
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"spec", "bpf-c", "bpftrace", "perf"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}
