package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/binscope/binscope/cmd/internal/command"
	"github.com/binscope/binscope/internal/usage"
	"github.com/binscope/binscope/runner"
)

func listCommand(stdout, stderr io.Writer) *cobra.Command {
	o := &runner.ListOptions{Options: runner.Options{Stdout: stdout, Stderr: stderr}}
	cmd := &cobra.Command{
		Use:   "list [-v] BIN | -p PID [PATTERN]",
		Short: "List what a definition can name: functions, USDT probes, source files",
		Long: `goprobe list prints one probe point a line, as a definition names it:
"func NAME" for each function with code (with its inline expansions and
compiler clones, each a site of its probes), "usdt:PROVIDER:NAME" for each
USDT probe (with its places and whether it has a semaphore), "file PATH" for
each source file of the functions (FILE:LINE). With -v, each function's
prototype and each USDT probe's arguments (arg0...) with their types and
operands. With -p, the process's executable and the functions and USDT
probes of every library it maps, each line of a library saying which. BIN
may be a shell pattern over several files ('./bin/app*'), each line saying
its file. PATTERN is a shell pattern ('*' any text, '?' one character) or,
without either, a part of the names.`,
		Example: `  goprobe list ./app 'main.*'
  goprobe list -v /usr/bin/python3.11 usdt
  goprobe list -p 4242 libstdcxx
  goprobe list './build/test_*' 'usdt:*'`,
		Args: command.Args(cobra.MaximumNArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Exe == "" && o.PID == 0 && len(args) > 0 {
				o.Exe, args = args[0], args[1:]
			}
			if len(args) > 1 {
				return usage.Errorf("one PATTERN at most, got %q", args)
			}
			if len(args) == 1 {
				o.Pattern = args[0]
			}
			return runner.List(o)
		},
	}
	fl := cmd.Flags()
	addTarget(fl, &o.Options)
	fl.BoolVarP(&o.Verbose, "verbose", "v", false, "add prototypes and USDT arguments with their types")
	return cmd
}
