// Package cli holds the command trees of gopahole, gofunct and goprobe. The
// mains in cmd/ are one call each; everything a command does beyond parsing
// flags lives in the model's packages.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// errSilent marks an error already reported to the user.
var errSilent = errors.New("reported")

// execute runs a cobra command tree and turns its error into the one-line
// message and exit status the tools promise: 0 on success, 1 on any error,
// 2 on a usage error.
func execute(root *cobra.Command, args []string, stdout, stderr io.Writer) (code int) {
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SilenceUsage = true
	root.SilenceErrors = true
	defer func() {
		// A bug must not show the user a goroutine dump: one line, exit 1.
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "%s: internal error: %v (please report it with the command line)\n", root.Name(), r)
			if os.Getenv("BINSCOPE_TRACEBACK") != "" {
				panic(r)
			}
			code = 1
		}
	}()
	err := root.Execute()
	if err == nil {
		return 0
	}
	if errors.Is(err, errSilent) {
		return 1
	}
	var st exitStatus
	if errors.As(err, &st) {
		return int(st)
	}
	msg := strings.TrimSpace(err.Error())
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	fmt.Fprintf(stderr, "%s: %s\n", root.Name(), msg)
	if isUsage(err) {
		return 2
	}
	return 1
}

type usageError struct{ error }

// exitStatus ends a command with a status and no message: goprobe exits
// with the status of the command it ran.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func isUsage(err error) bool {
	var u usageError
	if errors.As(err, &u) {
		return true
	}
	s := err.Error()
	return strings.HasPrefix(s, "unknown flag") || strings.HasPrefix(s, "unknown shorthand flag") ||
		strings.HasPrefix(s, "invalid argument") || strings.Contains(s, "flag needs an argument") ||
		strings.HasPrefix(s, "accepts at most") || strings.HasPrefix(s, "accepts ") || strings.HasPrefix(s, "unknown command")
}

// splitList splits repeatable, comma-separated flag values, keeping commas
// inside generic arguments (main.Pair[int,string], Generic<u32, u8>).
func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		depth, start := 0, 0
		for i := 0; i < len(v); i++ {
			switch v[i] {
			case '<', '[', '(':
				depth++
			case '>', ']', ')':
				depth--
			case ',':
				if depth == 0 {
					if s := strings.TrimSpace(v[start:i]); s != "" {
						out = append(out, s)
					}
					start = i + 1
				}
			}
		}
		if s := strings.TrimSpace(v[start:]); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// addCompletion gives a command without subcommands the --completion SHELL
// flag, printing a completion script for bash, zsh, fish or powershell
// (a completion subcommand would take a file of that name for itself).
func addCompletion(cmd *cobra.Command) {
	var shell string
	cmd.Flags().StringVar(&shell, "completion", "", "print a shell completion script: bash, zsh, fish or powershell")
	_ = cmd.RegisterFlagCompletionFunc("completion", cobra.FixedCompletions([]string{"bash", "zsh", "fish", "powershell"}, cobra.ShellCompDirectiveNoFileComp))
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		out := c.OutOrStdout()
		switch shell {
		case "":
			return run(c, args)
		case "bash":
			return c.Root().GenBashCompletionV2(out, true)
		case "zsh":
			return c.Root().GenZshCompletion(out)
		case "fish":
			return c.Root().GenFishCompletion(out, true)
		case "powershell":
			return c.Root().GenPowerShellCompletionWithDesc(out)
		}
		return usageError{fmt.Errorf("--completion %q: want bash, zsh, fish or powershell", shell)}
	}
}
