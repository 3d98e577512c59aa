package par

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestWorkerPanicEndsProgram: a panic in a piece of work of Each
// ends the program as any Go panic does (exit status 2), with the
// worker's own stack, and no recover on the caller's side sees it. The
// test runs itself again with BINSCOPE_PAR_PANIC naming the function.
func TestWorkerPanicEndsProgram(t *testing.T) {
	if which := os.Getenv("BINSCOPE_PAR_PANIC"); which != "" {
		defer func() {
			if p := recover(); p != nil {
				os.Exit(0) // carried to the caller: what must not happen
			}
		}()
		if runtime.GOMAXPROCS(0) < 2 {
			runtime.GOMAXPROCS(2)
		}
		work := func(i int) {
			if i == 777 {
				panic("piece 777")
			}
		}
		Each(1000, 2, work)
		os.Exit(0)
	}
	for _, which := range []string{"Each"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWorkerPanicEndsProgram$")
		cmd.Env = append(os.Environ(), "BINSCOPE_PAR_PANIC="+which)
		out, err := cmd.CombinedOutput()
		code := cmd.ProcessState.ExitCode()
		if err == nil || code != 2 || !strings.Contains(string(out), "panic: piece 777") ||
			!strings.Contains(string(out), "par.TestWorkerPanicEndsProgram") {
			t.Errorf("%s: exit status %d (%v), want 2 and the panic with the worker's stack:\n%s", which, code, err, out)
		}
	}
}
