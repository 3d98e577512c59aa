package stack

import (
	"bufio"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/binscope/binscope/internal/elfx"
)

// Mapping is one executable file mapping of a process, from
// /proc/PID/maps: the file's bytes from Offset on at [Start, End).
type Mapping struct {
	Start, End, Offset uint64
	Path               string // as the process names it (in its mount namespace)
	Bias               uint64 // address in the process minus address in the file
	// File is where this process reads it when the process has another
	// root or mount namespace (/proc/self/fd/N, see keptOpen): "" means Path.
	File string
}

// Readable is the path this process opens the mapped file by.
func (m *Mapping) Readable() string {
	if m.File != "" {
		return m.File
	}
	return m.Path
}

// ProcMappings reads the executable file mappings of process pid, with
// their load bias; files that are not ELF (or are gone) are left out.
func ProcMappings(pid int) ([]Mapping, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Mapping
	same := SameRoot(pid)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 55d4c4a00000-55d4c4a9c000 r-xp 00001000 fd:01 1234 /usr/bin/app
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || !strings.Contains(fs[1], "x") || !strings.HasPrefix(fs[5], "/") {
			continue
		}
		lo, hi, _ := strings.Cut(fs[0], "-")
		m := Mapping{Path: strings.Join(fs[5:], " ")}
		m.Start, _ = strconv.ParseUint(lo, 16, 64)
		m.End, _ = strconv.ParseUint(hi, 16, 64)
		m.Offset, _ = strconv.ParseUint(fs[2], 16, 64)
		if !same {
			if m.File = keptOpen(fmt.Sprintf("/proc/%d/root%s", pid, m.Path)); m.File == "" {
				continue
			}
		}
		ef, err := elfx.Open(m.Readable())
		if err != nil {
			continue
		}
		va, err := ef.VirtualAddress(m.Offset)
		ef.Close()
		if err != nil {
			continue
		}
		m.Bias = m.Start - va
		out = append(out, m)
	}
	return out, sc.Err()
}

// libDirs are where the dynamic loader looks for libraries by default.
var libDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
	"/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"}

// LoadedFiles lists the files a process running path will map before its
// first instruction, in the order the dynamic loader searches them for a
// symbol: path, the libraries it needs breadth first (found as the loader
// would by default: RUNPATH, then the standard directories), and its
// interpreter last. A profile sizes its tables with them before the
// command starts.
func LoadedFiles(path string) []string {
	seen := map[string]bool{path: true}
	queue := []string{path}
	var out []string
	interp := ""
	for len(queue) > 0 && len(out) < 256 {
		p := queue[0]
		queue = queue[1:]
		ef, err := elfx.Open(p)
		if err != nil {
			continue
		}
		out = append(out, p)
		var dirs []string
		for _, tag := range []elf.DynTag{elf.DT_RUNPATH, elf.DT_RPATH} {
			rp, _ := ef.DynString(tag)
			for _, r := range rp {
				for _, d := range strings.Split(r, ":") {
					dirs = append(dirs, strings.ReplaceAll(d, "$ORIGIN", filepath.Dir(p)))
				}
			}
		}
		for _, prog := range ef.Progs {
			if prog.Type == elf.PT_INTERP && interp == "" && prog.Filesz < 4096 {
				b := make([]byte, prog.Filesz)
				if _, err := prog.ReadAt(b, 0); err == nil {
					interp = strings.TrimRight(string(b), "\x00")
				}
			}
		}
		libs, _ := ef.ImportedLibraries()
		ef.Close()
		for _, lib := range libs {
			for _, d := range append(dirs, libDirs...) {
				c := filepath.Join(d, lib)
				if _, err := os.Stat(c); err == nil {
					if !seen[c] {
						seen[c] = true
						queue = append(queue, c)
					}
					break
				}
			}
		}
	}
	if interp == "" {
		return out
	}
	// The loader, unless a library needs it by name (the C library does).
	real, _ := filepath.EvalSymlinks(interp)
	for _, p := range out {
		if r, _ := filepath.EvalSymlinks(p); r == real {
			return out
		}
	}
	return append(out, interp)
}
