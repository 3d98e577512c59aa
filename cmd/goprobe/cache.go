package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/binscope/binscope/cmd/internal/command"
	"github.com/binscope/binscope/runner"
)

// cacheCommand manages the probe cache that goprobe gen --cache fills.
func cacheCommand(stdout io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache list | remove BUILD-ID|FILE [PROBE...]",
		Short: "List or remove the probes goprobe gen --cache keeps by build-id",
		Long: `The probe cache keeps probe specs by build-id, as perf probe --cache does:
goprobe gen --cache -x BINARY 'PROBE...' resolves the probes where the debug
info is, and trace, stat and hist on any file of the same build (a stripped
production copy) take them from the cache. It lives under $BINSCOPE_CACHE/probes,
else the user's cache directory (~/.cache/binscope/probes).`,
		Args: command.Args(cobra.NoArgs),
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "Print each cached build-id, the file its probes were made from, and its probes",
		Args:  command.Args(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			return runner.CacheList(stdout, nil)
		},
	}, &cobra.Command{
		Use:   "remove BUILD-ID|FILE [PROBE...]",
		Short: "Remove a build's cached probes (all of them when none is named)",
		Args:  command.Args(cobra.MinimumNArgs(1)),
		RunE: func(_ *cobra.Command, args []string) error {
			return runner.CacheRemove(args[0], args[1:], nil)
		},
	})
	return cmd
}
