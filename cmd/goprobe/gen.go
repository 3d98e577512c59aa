package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/binscope/binscope/cmd/internal/command"
	"github.com/binscope/binscope/session"
)

func genCommand(stdout, stderr io.Writer) *cobra.Command {
	o := &session.GenOptions{Log: stderr}
	cmd := &cobra.Command{
		Use:   "gen --format=FMT -x BINARY 'PROBE [ARG...]'...",
		Short: "Write the probes as a portable JSON spec, a libbpf-style BPF C program, a bpftrace script or perf probe commands",
		Example: `  goprobe gen --format=bpftrace -x ./app 'main.work' > work.bt && bpftrace work.bt -c ./app
  goprobe gen --format=spec -x ./app 'github.com/prometheus/client_golang/prometheus.(*counter).Add v:f64 c->valInt'
  goprobe gen --format=perf -x ./prog 'maybe_alloc n'`,
		Args: command.Args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Exe == "" {
				return command.Usagef("-x BINARY is required")
			}
			o.Defs = args
			return session.Gen(stdout, o)
		},
	}
	cmd.Flags().StringVar(&o.Format, "format", "spec", "artifact: spec (portable JSON), bpf-c (libbpf-style program), bpftrace or perf")
	cmd.Flags().StringVarP(&o.Exe, "exe", "x", "", "the binary whose debug info defines the probes")
	cmd.Flags().StringVar(&o.Target, "target", "", "the file to attach to, when not BINARY: a stripped copy with the same build-id")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]string{"spec", "bpf-c", "bpftrace", "perf"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}
