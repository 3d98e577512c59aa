package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestProfileDeepStack: a program spinning at the bottom of a recursion 100
// calls deep says so ("depth=100"); the profile's stacks hold all of it:
// 101 frames of down() under main, below the 127-frame bound (at 32 the
// stacks were cut at 30 of them), and none is counted truncated.
func TestProfileDeepStack(t *testing.T) {
	needBPF(t)
	dir := filepath.Join(testutil.Root(t), "probe", "testdata", "profile")
	bin := buildWith(t, dir, "gcc", "-O2", "-g", "-o", "BIN", filepath.Join(dir, "deep.c"))
	folded := filepath.Join(t.TempDir(), "deep.folded")
	code, out, errs := runGoprobe("profile", "-F", "499", "--top", "0", "--folded", folded, "--", bin, "100")
	if code != 0 || !strings.Contains(out+errs, "depth=100") {
		t.Fatalf("exit %d; the program did not report its depth:\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, " 0 truncated at 127 frames") {
		t.Errorf("stacks truncated:\n%s", errs)
	}
	stacks, counts := readFolded(t, folded)
	var whole, all uint64
	for i, s := range stacks {
		downs := 0
		for _, f := range s {
			if f == "down" {
				downs++
			}
		}
		all += counts[i]
		if downs == 101 && strings.Contains(strings.Join(s, ";"), "main;down") {
			whole += counts[i]
		}
	}
	if all < 100 || whole < all*8/10 {
		t.Errorf("%d of %d samples hold the 101 frames of down() under main\n%s", whole, all, errs)
	}
}

// gdbBacktrace runs bin with args under gdb to a breakpoint on fn and
// returns the function of each frame of its backtrace, innermost first,
// down to main (gdb's default end).
func gdbBacktrace(t *testing.T, bin, fn string, args ...string) []string {
	t.Helper()
	if _, err := exec.LookPath("gdb"); err != nil {
		testutil.Skipf(t, "gdb not installed: %v", err)
	}
	out, err := exec.Command("gdb", append([]string{"-batch", "-ex", "set pagination off", "-ex", "break " + fn, "-ex", "run", "-ex", "bt", "-ex", "kill", "-args", bin}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	frame := regexp.MustCompile(`^#(\d+)\s+(?:0x[0-9a-f]+ in )?(\S+) \(`)
	var names []string
	for _, l := range strings.Split(string(out), "\n") {
		if m := frame.FindStringSubmatch(l); m != nil {
			if n, _ := strconv.Atoi(m[1]); n != len(names) {
				t.Fatalf("gdb frame #%s after %d frames:\n%s", m[1], len(names), out)
			}
			names = append(names, m[2])
		}
	}
	return names
}

// TestTraceStackDeep: trace --stack at the bottom of a recursion the
// program counts itself (depth=N) prints the frames gdb's backtrace shows
// at the same point, in order: spin, N+1 frames of down, main (then libc's
// start, below gdb's end). At N = 100 all of them; at N = 200 the first
// 127 (perf's default depth), the stack counted truncated.
func TestTraceStackDeep(t *testing.T) {
	needBPF(t)
	dir := filepath.Join(testutil.Root(t), "probe", "testdata", "profile")
	bin := buildWith(t, dir, "gcc", "-O2", "-g", "-o", "BIN", filepath.Join(dir, "deep.c"))
	for _, depth := range []int{100, 200} {
		t.Run(fmt.Sprint(depth), func(t *testing.T) {
			want := gdbBacktrace(t, bin, "spin", fmt.Sprint(depth))
			if len(want) != depth+3 {
				t.Fatalf("gdb's backtrace has %d frames, want %d: %v", len(want), depth+3, want)
			}
			code, out, errs := runGoprobe("trace", "--json", "--stack", "spin", "--", bin, fmt.Sprint(depth))
			if code != 0 || !strings.Contains(out, fmt.Sprintf("depth=%d", depth)) {
				t.Fatalf("exit %d; the program did not report its depth:\n%s\n%s", code, out, errs)
			}
			var got []string
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "{") {
					var ev struct{ Stack []string }
					if err := json.Unmarshal([]byte(l), &ev); err != nil {
						t.Fatal(err)
					}
					if got != nil {
						t.Fatalf("two events: %s", out)
					}
					got = ev.Stack
				}
			}
			n := min(len(want), 127)
			if depth > 127 {
				if len(got) != 127 {
					t.Errorf("%d frames printed, want 127 (the depth bound)", len(got))
				}
				if !strings.Contains(errs, "1 stacks truncated at 127 frames") {
					t.Errorf("the truncation is not reported:\n%s", errs)
				}
			} else if len(got) < n+1 || got[n] != "__libc_start_call_main" {
				t.Errorf("%d frames printed, want gdb's %d and libc's below main", len(got), n)
			}
			if len(got) < n || strings.Join(got[:n], " ") != strings.Join(want[:n], " ") {
				t.Errorf("frames differ from gdb's backtrace:\n got %v\nwant %v", got, want[:n])
			}
		})
	}
}
