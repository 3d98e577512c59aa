package main

import (
	"archive/zip"
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binscope/binscope/internal/testutil"
)

// bench/bpftrace-cases.tsv holds every case of bpftrace's runtime tests
// (tests/runtime of bpftrace) that names a user program, one a row: the
// case, its subject, whether it is in scope for goprobe (a probe point, an
// argument, a type, a stack, a listing, a USDT probe) or why not
// ("out:maps", ...), the goprobe command that says the same of our own
// programs (testdata/btcases), the oracle its output is checked against,
// and the status measured ("pass", or "fail: why").
//
// Placeholders in a command: {shapes}, {marks}, ... the programs built
// below; {pid:P} starts P for ever and is its pid; {run:P} starts P and
// is dropped; {pidns:P} and {mntns:P} start P in a new pid or mount
// namespace; {mntroot:P} is P's path through /proc/PID/root; {line:TEXT} is the line of shapes.c holding TEXT; {nm:B:F}
// is F's address in B; {dir} the directory of the main builds. A command
// starting with "noaslr" runs goprobe, and what it starts, under setarch -R.
type btCase struct {
	Name, Subject, Scope, Command, Oracle, Status string
}

func readBtCases(t *testing.T) []btCase {
	t.Helper()
	f, err := os.Open(filepath.Join(testutil.Root(t), "bench", "bpftrace-cases.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cs []btCase
	sc := bufio.NewScanner(f)
	for n := 0; sc.Scan(); n++ {
		fs := strings.Split(sc.Text(), "\t")
		if n == 0 {
			continue
		}
		if len(fs) != 6 {
			t.Fatalf("bpftrace-cases.tsv:%d: %d fields, want 6", n+1, len(fs))
		}
		cs = append(cs, btCase{fs[0], fs[1], fs[2], fs[3], fs[4], fs[5]})
	}
	return cs
}

// btProgs are the built programs by placeholder name.
type btProgs struct {
	path    map[string]string
	src     string // shapes.c
	goprobe string
	base    string // the directory of shapes, marks, uselib and libtally.so
}

func buildBtProgs(t *testing.T) *btProgs {
	t.Helper()
	src := filepath.Join(testutil.Root(t), "cmd", "goprobe", "testdata", "btcases")
	root := t.TempDir()
	p := &btProgs{path: map[string]string{}, src: filepath.Join(src, "shapes.c"), base: filepath.Join(root, "base"), goprobe: buildGoprobe(t, root)}
	run := func(dir string, name string, args ...string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	at := func(key, dir, file string) { p.path[key] = filepath.Join(root, dir, file) }
	shapes, marks := filepath.Join(src, "shapes.c"), filepath.Join(src, "marks.c")
	run(p.base, "gcc", "-O0", "-g", "-o", "shapes", shapes)
	run(p.base, "gcc", "-O0", "-g", "-no-pie", "-o", "shapes-nopie", shapes)
	run(p.base, "gcc", "-O2", "-g", "-o", "marks", marks, filepath.Join(src, "gate.c"))
	run(p.base, "gcc", "-O2", "-g", "-shared", "-fPIC", "-o", "libtally.so", filepath.Join(src, "lib.c"))
	run(p.base, "gcc", "-O2", "-g", "-o", "uselib", filepath.Join(src, "uselib.c"), "-L.", "-ltally", "-Wl,-rpath,$ORIGIN")
	// A second file that {dir}/mark* names: a pattern spans files.
	run(p.base, "cp", "marks", "marks-copy")
	for _, k := range []string{"shapes", "shapes-nopie", "marks", "libtally.so", "uselib"} {
		at(strings.TrimSuffix(k, ".so"), "base", k)
	}
	base := p.path["shapes"]
	run(filepath.Join(root, "symtab"), "strip", "--strip-debug", "-o", "shapes", base)
	at("shapes-symtab", "symtab", "shapes")
	// A stripped copy whose debug file (by debug link) is in another
	// directory, and one whose debug file is in .debug beside it.
	run(filepath.Join(root, "debug"), "objcopy", "--only-keep-debug", base, "shapes.debug")
	run(filepath.Join(root, "stripped"), "strip", "-g", "-o", "shapes", base)
	run(filepath.Join(root, "stripped"), "objcopy", "--add-gnu-debuglink="+filepath.Join(root, "debug", "shapes.debug"), "shapes")
	at("shapes-stripped", "stripped", "shapes")
	at("debugdir", "debug", "")
	run(filepath.Join(root, "empty"), "true")
	at("emptydir", "empty", "")
	run(filepath.Join(root, "dotdebug", ".debug"), "cp", filepath.Join(root, "debug", "shapes.debug"), ".")
	run(filepath.Join(root, "dotdebug"), "cp", filepath.Join(root, "stripped", "shapes"), ".")
	at("shapes-dotdebug", "dotdebug", "shapes")
	run(filepath.Join(root, "dwo"), "gcc", "-O0", "-g", "-gsplit-dwarf", "-o", "shapes", shapes)
	at("shapes-dwo", "dwo", "shapes")
	run(filepath.Join(root, "dwp"), "gcc", "-O0", "-g", "-gsplit-dwarf", "-o", "shapes", shapes)
	run(filepath.Join(root, "dwp"), "llvm-dwp", "-e", "shapes", "-o", "shapes.dwp")
	dwos, _ := filepath.Glob(filepath.Join(root, "dwp", "*.dwo"))
	for _, d := range dwos {
		os.Remove(d)
	}
	at("shapes-dwp", "dwp", "shapes")
	run(filepath.Join(root, "nofp"), "gcc", "-O2", "-g", "-fomit-frame-pointer", "-o", "shapes", shapes)
	at("shapes-nofp", "nofp", "shapes")
	run(filepath.Join(root, "go"), "go", "build", "-o", "hello-go", filepath.Join(src, "hello.go"))
	at("hello-go", "go", "hello-go")
	run(filepath.Join(root, "rust"), "rustc", "-g", "-o", "hello-rust", filepath.Join(src, "hello.rs"))
	at("hello-rust", "rust", "hello-rust")
	p.path["zip"] = zipOf(t, base, filepath.Join(root, "shapes.zip"))
	p.path["dir"] = p.base
	return p
}

// zipOf stores bin, uncompressed, as the one member "shapes" of a zip.
func zipOf(t *testing.T, bin, out string) string {
	t.Helper()
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "shapes", Method: zip.Store})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// btRun is one run of a case's command: what goprobe said, and the
// records of the programs it started in the background.
type btRun struct {
	code      int
	out, errs string
	records   string
	pids      map[string]int // placeholder -> pid
	bg        []*exec.Cmd
	linkTypes []string // the BPF links goprobe held after a second (multi-link)
	mntdir    string   // where a mount namespace's program runs from
}

var placeholder = regexp.MustCompile(`\{([a-z]+):([^}]+)\}|\{([a-z0-9-]+)\}`)

// expand replaces the placeholders of cmd, starting the background
// programs it names; the caller stops them with stop.
func (p *btProgs) expand(t *testing.T, cmd string, r *btRun) string {
	t.Helper()
	return placeholder.ReplaceAllStringFunc(cmd, func(m string) string {
		s := placeholder.FindStringSubmatch(m)
		if s[3] != "" {
			v, ok := p.path[s[3]]
			if !ok {
				t.Fatalf("no program %s", s[3])
			}
			return v
		}
		switch kind, arg := s[1], s[2]; kind {
		case "mntroot":
			// The program's path as its own mount namespace sees it,
			// through /proc/PID/root (as after a pivot_root).
			pid := p.start(t, "mntns", arg, r)
			return fmt.Sprintf("/proc/%d/root%s", pid, r.mntdir)
		case "pid", "run", "pidns", "mntns":
			key := kind + ":" + arg
			if pid, ok := r.pids[key]; ok && kind != "run" {
				return strconv.Itoa(pid)
			}
			pid := p.start(t, kind, arg, r)
			r.pids[key] = pid
			if kind == "run" {
				return ""
			}
			return strconv.Itoa(pid)
		case "line":
			return strconv.Itoa(p.lineOf(t, arg))
		case "nm":
			b, f, _ := strings.Cut(arg, ":")
			return fmt.Sprintf("%#x", nmSym(t, p.path[b], f).addr)
		}
		t.Fatalf("placeholder %s", m)
		return ""
	})
}

// start runs prog for ever in the background (in a new pid or mount
// namespace for pidns and mntns), its output kept for the records, and
// returns the pid of prog itself once it runs.
func (p *btProgs) start(t *testing.T, kind, prog string, r *btRun) int {
	t.Helper()
	bin := p.path[prog]
	var cmd *exec.Cmd
	switch kind {
	case "pidns":
		cmd = exec.Command("unshare", "--fork", "--pid", "--mount-proc", bin, "0")
	case "mntns":
		// The program runs from a tmpfs mounted in its own mount
		// namespace over an empty directory: its path names nothing
		// outside (as bpftrace's mountns_wrapper does).
		dir := filepath.Join(t.TempDir(), "mnt")
		os.Mkdir(dir, 0o755)
		r.mntdir = dir
		cmd = exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c",
			fmt.Sprintf("mount -t tmpfs none %s && cp %s %s/ && cp %s/libtally.so %s/ 2>/dev/null; exec %s/%s 0", dir, bin, dir, p.base, dir, dir, filepath.Base(bin)))
	default:
		cmd = exec.Command(bin, "0")
	}
	rec, err := os.CreateTemp(t.TempDir(), "rec")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = rec
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.bg = append(r.bg, cmd)
	want := filepath.Base(bin)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if pid := descendantRunning(cmd.Process.Pid, want); pid > 0 {
			return pid
		}
	}
	t.Fatalf("%s did not start", bin)
	return 0
}

// descendantRunning is the pid of the process (root or a descendant)
// whose executable is named name, 0 if none yet.
func descendantRunning(root int, name string) int {
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && filepath.Base(exe) == name {
			return pid
		}
		kids, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		for _, k := range strings.Fields(string(kids)) {
			n, _ := strconv.Atoi(k)
			queue = append(queue, n)
		}
	}
	return 0
}

// linkTypes are the types of the BPF links process pid holds, from its
// file descriptors' fdinfo (the kernel's "link_type").
func linkTypes(pid int) []string {
	var types []string
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fdinfo", pid))
	for _, fd := range fds {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, fd.Name()))
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "link_type:"); ok {
				types = append(types, strings.TrimSpace(v))
			}
		}
	}
	return types
}

func (r *btRun) stop() {
	for _, c := range r.bg {
		syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		c.Wait()
		if f, ok := c.Stdout.(*os.File); ok {
			f.Seek(0, io.SeekStart)
			b, _ := io.ReadAll(f)
			r.records += string(b)
			f.Close()
		}
	}
}

// lineOf is the line of shapes.c holding text.
func (p *btProgs) lineOf(t *testing.T, text string) int {
	t.Helper()
	b, err := os.ReadFile(p.src)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, text) {
			return i + 1
		}
	}
	t.Fatalf("shapes.c has no line with %q", text)
	return 0
}

// shellWords splits a command as sh does for words in single or double
// quotes (no escapes but \" inside double quotes).
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == 0 && c == ' ':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
			continue
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
		case quote != 0 && c == quote:
			quote = 0
		case quote == '"' && c == '\\' && i+1 < len(s) && s[i+1] == '"':
			i++
			w.WriteByte('"')
		default:
			w.WriteByte(c)
		}
		in = true
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// runBtCase runs one case's command.
func (p *btProgs) runBtCase(t *testing.T, c btCase) *btRun {
	t.Helper()
	r := &btRun{pids: map[string]int{}}
	t.Cleanup(r.stop)
	var args []string
	for _, w := range shellWords(c.Command) {
		if w = p.expand(t, w, r); w != "" {
			args = append(args, w)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	name := p.goprobe
	if len(args) > 0 && args[0] == "noaslr" {
		// goprobe itself runs with address space randomization off, and
		// so the programs it starts (as gdb runs them).
		name, args = "setarch", append([]string{"-R", p.goprobe}, args[1:]...)
	}
	cmd := exec.CommandContext(ctx, name, args...)
	var out, errs strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errs
	err := cmd.Start()
	if err == nil && strings.HasPrefix(c.Oracle, "multi-link") {
		time.Sleep(time.Second)
		r.linkTypes = linkTypes(cmd.Process.Pid)
	}
	if err == nil {
		err = cmd.Wait()
	}
	r.code, r.out, r.errs = cmd.ProcessState.ExitCode(), out.String(), errs.String()
	if ctx.Err() != nil {
		r.code, r.errs = -1, "timed out after 90 s\n"+r.errs
	} else if err != nil && r.code == 0 {
		t.Fatal(err)
	}
	r.stop()
	r.bg = nil
	return r
}

// TestBpftraceCases writes every in-scope case of bpftrace's user-program
// runtime tests with goprobe on our own programs and checks each against
// its oracle (the programs' own records, gdb, readelf, addr2line,
// the kernel's fdinfo). A case whose status is "pass" must pass; one
// marked "fail:" that passes is said (the table is out of date).
func TestBpftraceCases(t *testing.T) {
	needBPF(t)
	cases := readBtCases(t)
	if len(cases) < 240 {
		t.Fatalf("%d cases in the table, want the 249 of bpftrace's runtime tests on user programs", len(cases))
	}
	p := buildBtProgs(t)
	only := regexp.MustCompile(os.Getenv("BTCASE"))
	var inScope, passed, marked int
	var failed []string
	for _, c := range cases {
		if c.Scope != "in" || !only.MatchString(c.Name) {
			continue
		}
		inScope++
		if c.Status == "pass" {
			marked++
		}
		ok := t.Run(strings.NewReplacer(" ", "_", ":", "").Replace(c.Name), func(t *testing.T) {
			r := p.runBtCase(t, c)
			err := p.check(t, c, r)
			switch {
			case err == nil && c.Status != "pass":
				// Said, not failed: another part's progress should not
				// stop the suite; the count below shows it.
				t.Logf("passes now (status %q): mark it pass in bench/bpftrace-cases.tsv", c.Status)
			case err != nil && c.Status == "pass":
				t.Errorf("%s\ncommand: %s\noracle: %s\nexit %d\nstdout:\n%s\nstderr:\n%s", err, c.Command, c.Oracle, r.code, tail(r.out), r.errs)
			case err != nil:
				t.Logf("fails as the table says (%s): %v", c.Status, err)
			}
			if err == nil {
				passed++
			} else {
				failed = append(failed, c.Name+": "+err.Error())
			}
		})
		_ = ok
	}
	sort.Strings(failed)
	t.Logf("%d of %d in-scope cases pass; failing:\n%s", passed, inScope, strings.Join(failed, "\n"))
	if only.String() == "" && passed < marked {
		t.Errorf("%d cases pass, the table marks %d", passed, marked)
	}
}

func tail(s string) string {
	if len(s) > 3000 {
		return "..." + s[len(s)-3000:]
	}
	return s
}
