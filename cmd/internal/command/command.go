// Package command holds what the command trees of gopahole, gofunct and
// goprobe share: running a cobra tree with the tools' exit statuses and
// one-line errors, usage errors, --completion, and comma lists.
package command

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/spf13/cobra"
)

// Execute runs a cobra command tree with args and turns its error into the
// one-line message and exit status the tools promise: 0 on success, 1 on
// any error, 2 on a usage error, or the status an ExitStatus carries.
func Execute(root *cobra.Command, args []string, stdout, stderr io.Writer) (code int) {
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SilenceUsage = true
	root.SilenceErrors = true
	// Flag errors (unknown flags, bad values, missing values) are usage
	// errors; subcommands inherit this.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return Usage(err) })
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
	var st ExitStatus
	if errors.As(err, &st) {
		return int(st)
	}
	msg := strings.TrimSpace(err.Error())
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	fmt.Fprintf(stderr, "%s: %s\n", root.Name(), msg)
	if IsUsage(err) {
		return 2
	}
	return 1
}

// usageError marks a command line the tool cannot run.
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }
func (usageError) Usage() bool     { return true }

// Usage marks err as a usage error (exit status 2).
func Usage(err error) error { return usageError{err} }

// Usagef is Usage(fmt.Errorf(format, args...)).
func Usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// IsUsage reports whether err is a usage error: one made by Usage, or a
// library's error with a Usage() bool method that says so.
func IsUsage(err error) bool {
	var u interface{ Usage() bool }
	return errors.As(err, &u) && u.Usage()
}

// Args makes the errors of a cobra argument check (too many arguments,
// an unknown command) usage errors.
func Args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return Usage(err)
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
		return Usagef("--completion %q: want bash, zsh, fish or powershell", shell)
	}
}

// OneOf refuses a flag value outside want, as a usage error naming them.
func OneOf(flag, value string, want ...string) error {
	for _, w := range want {
		if value == w {
			return nil
		}
	}
	return Usagef("%s %q: want %s", flag, value, orList(want))
}

func orList(ws []string) string {
	if len(ws) == 1 {
		return ws[0]
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " or " + ws[len(ws)-1]
}

// OneShotGC is for a run that reads a whole file once and exits, unless
// the user set GOGC: the garbage collector first runs when the heap
// reaches oneShotHeap (a small file's run, a C++ program's listing or
// glibc's prototypes, collects nothing), then paces as GOGC=400 (a quarter
// as often as the default) for a large one.
func OneShotGC() {
	if os.Getenv("GOGC") != "" {
		return
	}
	oneShot.Lock()
	defer oneShot.Unlock()
	oneShot.on = true
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(oneShotHeap)
	armFirstCollection()
}

// oneShot is OneShotGC's state: on until the first collection hands
// pacing to GOGC=400; gen counts the sentinels armed, so that only the
// last one's finalizer acts (HugeHeap's own collection is not the first).
var oneShot struct {
	sync.Mutex
	on, huge bool
	gen      int
}

// armFirstCollection makes the next collection hand pacing to GOGC=400:
// it finds this object unreachable and runs its finalizer.
// oneShot is locked.
func armFirstCollection() {
	oneShot.gen++
	gen := oneShot.gen
	runtime.SetFinalizer(new(sentinel), func(*sentinel) {
		oneShot.Lock()
		defer oneShot.Unlock()
		if gen == oneShot.gen && oneShot.on {
			oneShot.on = false
			debug.SetGCPercent(400)
			debug.SetMemoryLimit(math.MaxInt64)
		}
	})
}

// HugeHeap is for a OneShotGC run about to decode the file at path: when
// it is large (hugeHeapInput), the heap it fills is backed by huge pages
// where the kernel allows (see hugeHeap). Once per run, before the first
// collection; the collection it runs keeps OneShotGC's pacing. It runs
// before the file is opened, not beside it: a collection of the empty heap
// takes a fraction of a millisecond alone, where one running beside the
// file's reading held a core for its marking and stopped the run for up
// to two (cpp-real's listing took 1.9 ms longer, medians of 40 runs).
func HugeHeap(path string) {
	if st, err := os.Stat(path); err != nil || st.Size() < hugeHeapInput {
		return
	}
	oneShot.Lock()
	defer oneShot.Unlock()
	if !oneShot.on || oneShot.huge {
		return
	}
	oneShot.huge = true
	oneShot.gen++ // the collection below is not the first: its finalizer does nothing
	hugeHeap(hugeHeapBytes)
	armFirstCollection()
}

const (
	// oneShotHeap is the heap a run grows to before its first collection.
	oneShotHeap = 256 << 20
	// hugeHeapInput is the smallest file HugeHeap prepares for: a listing
	// of a 1 MB binary fills a few MB of heap.
	hugeHeapInput = 1 << 20
	// hugeHeapBytes is the heap HugeHeap advises: address space, touched
	// only as the run allocates (cpp-real's prototypes fill 60 MB).
	hugeHeapBytes = 128 << 20
)

// sentinel holds a pointer, so that it is never batched with other small
// objects (whose finalizers may not run).
type sentinel struct{ _ *byte }
