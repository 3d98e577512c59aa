package gen

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Build is one compiler and its options.
type Build struct {
	Name string // gcc-O2, gcc-O3, clang-O2, go, go1.16, rust-O3, zig-fast
	Lang Lang
	// Toolchain is the GOTOOLCHAIN a Go build asks the go command for
	// (it fetches it); "" is the go command's own.
	Toolchain string
}

// Builds are every build the harness knows. go1.16 is the oldest Go the
// tools read: arguments on the stack, the goroutine in thread-local
// storage (its stack check loads it into a register first).
var Builds = []Build{
	{"gcc-O2", C, ""}, {"gcc-O3", C, ""}, {"clang-O2", C, ""}, {"go", Go, ""}, {"go1.16", Go, "go1.16.15"},
	{"rust-O3", Rust, ""}, {"zig-fast", Zig, ""},
}

// BuildNamed returns the build called name.
func BuildNamed(name string) (Build, bool) {
	for _, b := range Builds {
		if b.Name == name {
			return b, true
		}
	}
	return Build{}, false
}

// Tool is the program a build needs.
func (b Build) Tool() string {
	switch b.Name {
	case "gcc-O2", "gcc-O3":
		return "gcc"
	case "clang-O2":
		return "clang"
	case "go", "go1.16":
		return "go"
	case "rust-O3":
		return "rustc"
	}
	return "zig"
}

// Make writes p's source into dir and builds it there; it returns the
// program's path.
func (b Build) Make(p *Program, dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if err = os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "prog")
	src := p.Source(b.Lang)
	var cmd *exec.Cmd
	switch b.Lang {
	case C:
		file := filepath.Join(dir, "prog.c")
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			return "", err
		}
		opt := "-O2"
		if b.Name == "gcc-O3" {
			opt = "-O3"
		}
		cmd = exec.Command(b.Tool(), opt, "-g", "-o", bin, file)
	case Go:
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module prog\n\ngo 1.22\n"), 0o644); err != nil {
			return "", err
		}
		cmd = exec.Command("go", "build", "-o", bin, ".")
		// -mod=mod in place of the go env file's flags, which older go
		// commands may not know (-buildvcs is Go 1.18's).
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "CGO_ENABLED=0")
		if b.Toolchain != "" {
			cmd.Env = append(cmd.Env, "GOTOOLCHAIN="+b.Toolchain)
		}
	case Rust:
		file := filepath.Join(dir, "prog.rs")
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			return "", err
		}
		cmd = exec.Command("rustc", "--edition=2021", "--crate-name", "prog", "-C", "opt-level=3", "-g", "-o", bin, file)
	case Zig:
		file := filepath.Join(dir, "prog.zig")
		if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
			return "", err
		}
		cmd = exec.Command("zig", "build-exe", "-O", "ReleaseFast", "-fno-strip", "-femit-bin="+bin, file)
		cmd.Env = append(os.Environ(), "ZIG_GLOBAL_CACHE_DIR="+filepath.Join(os.TempDir(), "binscope-gen-zig-cache"))
	}
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: %v\n%s", b.Name, err, out)
	}
	return bin, nil
}

// Record is what a program wrote about its own calls.
type Record struct {
	Calls  map[string]int                // calls per function
	Values map[string]map[string][]int64 // per function and parameter, each call's value
	Seq    []string                      // each call's function, in the order made
}

// ReadRecord reads the record a program wrote to path.
func ReadRecord(path string) (*Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &Record{Calls: map[string]int{}, Values: map[string]map[string][]int64{}}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	n := 0
	for _, l := range lines {
		fs := strings.Fields(l)
		if len(fs) == 0 {
			continue
		}
		if fs[0] == "end" {
			total, _ := strconv.Atoi(fs[1])
			if total != n {
				return nil, fmt.Errorf("%s: %d calls, %d recorded (the ring holds %d)", path, total, n, RingSize)
			}
			return r, nil
		}
		n++
		r.Calls[fs[0]]++
		r.Seq = append(r.Seq, fs[0])
		vs := r.Values[fs[0]]
		if vs == nil {
			vs = map[string][]int64{}
			r.Values[fs[0]] = vs
		}
		for _, kv := range fs[1:] {
			k, v, _ := strings.Cut(kv, "=")
			x, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %q: %v", path, l, err)
			}
			vs[k] = append(vs[k], x)
		}
	}
	return nil, fmt.Errorf("%s: no end line (did the program finish?)", path)
}

// sameRecord says how the program's record of its run under goprobe
// (run: stat, trace) differs from its record run alone, if it does: the
// same calls with the same arguments in the same order, or goprobe changed
// what the program did.
func sameRecord(dir, run string) error {
	alone, err := os.ReadFile(filepath.Join(dir, "base.rec"))
	if err != nil {
		return err
	}
	probed, err := os.ReadFile(filepath.Join(dir, run+".rec"))
	if err != nil {
		return err
	}
	if bytes.Equal(alone, probed) {
		return nil
	}
	a, b := strings.Split(strings.TrimSuffix(string(alone), "\n"), "\n"), strings.Split(strings.TrimSuffix(string(probed), "\n"), "\n")
	k := 0
	for k < min(len(a), len(b)) && a[k] == b[k] {
		k++
	}
	line := func(ls []string) string {
		if k < len(ls) {
			return strconv.Quote(ls[k])
		}
		return "its end"
	}
	return fmt.Errorf("the program's record under goprobe %s differs from its run alone at line %d: %s where it wrote %s",
		run, k+1, line(b), line(a))
}
