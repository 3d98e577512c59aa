// Package command holds what the command trees of gopahole, gofunct and
// goprobe share: running a cobra tree with the tools' exit statuses and
// one-line errors, usage errors, --completion, and comma lists.
package command

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/usage"
)

// Execute runs a cobra command tree with args and turns its error into the
// one-line message and exit status the tools promise: 0 on success, 1 on
// any error, 2 on a usage error, or the status an ExitStatus carries. Bad
// input is an error (each decoder turns a panic of the library it calls on
// corrupt input into one); a panic is a bug and ends the program.
func Execute(root *cobra.Command, args []string, stdout, stderr io.Writer) int {
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SilenceUsage = true
	root.SilenceErrors = true
	// Flag errors (unknown flags, bad values, missing values) are usage
	// errors; subcommands inherit this.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usage.Wrap(err) })
	err := root.Execute()
	if err == nil {
		return 0
	}
	var st ExitStatus
	if errors.As(err, &st) {
		return int(st)
	}
	msg := strings.TrimSpace(err.Error())
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	fmt.Fprintf(stderr, "%s: %s\n", root.Name(), msg)
	if usage.Is(err) {
		return 2
	}
	return 1
}

// Args makes the errors of a cobra argument check (too many arguments,
// an unknown command) usage errors.
func Args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usage.Wrap(err)
		}
		return nil
	}
}

// ExitStatus ends a command with a status and no message: goprobe exits
// with the status of the command it ran.
type ExitStatus int

func (e ExitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// Exit ends a command that ran another: with err when it failed, else
// with the other's status (nil for 0).
func Exit(status int, err error) error {
	if err != nil || status == 0 {
		return err
	}
	return ExitStatus(status)
}

// SplitList splits repeatable, comma-separated flag values, keeping commas
// inside generic arguments (main.Pair[int,string], Generic<u32, u8>).
func SplitList(vals []string) []string {
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

// AddCompletion gives a command without subcommands the --completion SHELL
// flag, printing a completion script for bash, zsh, fish or powershell
// (a completion subcommand would take a file of that name for itself).
func AddCompletion(cmd *cobra.Command) {
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
		return usage.Errorf("--completion %q: want bash, zsh, fish or powershell", shell)
	}
}

// OneOf refuses a flag value outside want, as a usage error naming them.
func OneOf(flag, value string, want ...string) error {
	for _, w := range want {
		if value == w {
			return nil
		}
	}
	return usage.Errorf("%s %q: want %s", flag, value, orList(want))
}

func orList(ws []string) string {
	if len(ws) == 1 {
		return ws[0]
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " or " + ws[len(ws)-1]
}

// AddDebugInfo adds --debuginfo DIR to cmd and its subcommands: each
// DIR (repeatable, comma-separated) is searched first for separate debug
// files (DIR/.build-id/xx/rest.debug, DIR/DEBUGLINK) and for split
// DWARF's .dwo and BINARY.dwp files. It resets the list, for a command
// tree run more than once in a process.
func AddDebugInfo(cmd *cobra.Command) {
	elfx.DebugDirs = nil
	cmd.PersistentFlags().Var(debugDirs{}, "debuginfo",
		"search DIR first for separate debug files (by build-id, by debug link) and split DWARF's .dwo/.dwp files (repeatable)")
}

// debugDirs is --debuginfo's value: elfx.DebugDirs.
type debugDirs struct{}

func (debugDirs) String() string { return strings.Join(elfx.DebugDirs, ",") }
func (debugDirs) Type() string   { return "DIR" }

func (debugDirs) Set(v string) error {
	for _, dir := range SplitList([]string{v}) {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return usage.Errorf("--debuginfo %s: not a directory", dir)
		}
		elfx.DebugDirs = append(elfx.DebugDirs, dir)
	}
	return nil
}
