package runner

import (
	"bufio"
	"bytes"
	"fmt"
	"github.com/binscope/binscope/internal/elfx"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/binscope/binscope/internal/arch"
	"github.com/binscope/binscope/stack"
)

// FindExe is the file -x names: the path as given when a file is there
// (or the one file a shell pattern names),
// else, for a name without a directory, a library by its soname
// (libc.so.6) or by the soname's stem (libc): among the files process pid
// maps when pid > 0 (through the process's root, for a container), else
// in the dynamic loader's cache (ldconfig -p), as the loader would find
// it. An error says what was looked at.
func FindExe(exe string, pid int) (string, error) {
	if files, ok := exeFiles(exe); ok {
		// trace, stat, hist and list take a pattern of files (see
		// targetParts); what asks for one file gets one.
		if len(files) == 1 {
			return files[0], nil
		}
		return "", fmt.Errorf("%s: a pattern naming %d files (%s), where one file is needed: name one (goprobe list %q lists each file's points)", exe, len(files), strings.Join(files, ", "), exe)
	}
	if _, err := os.Stat(exe); err == nil || strings.ContainsRune(exe, '/') {
		return exe, nil
	}
	where := "the dynamic loader's cache (ldconfig -p)"
	if pid > 0 {
		if p := mappedLibrary(exe, pid); p != "" {
			return p, nil
		}
		where = fmt.Sprintf("the files process %d maps", pid)
	} else if p := cachedLibrary(exe); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("%s: no such file, and no library of that name in %s: give its path", exe, where)
}

// libraryMatch reports whether a library file's base name answers to
// name: the name itself (libc.so.6), or its stem followed by a version
// or a .so (libc: libc.so.6, libc-2.36.so).
func libraryMatch(base, name string) bool {
	if base == name {
		return true
	}
	rest, ok := strings.CutPrefix(base, name)
	return ok && (strings.HasPrefix(rest, ".so") || (strings.HasPrefix(rest, "-") && strings.Contains(rest, ".so")))
}

// mappedLibrary is the file process pid maps whose name answers to name,
// exact names first; "" for none.
func mappedLibrary(name string, pid int) string {
	ms, err := stack.ProcMappings(pid)
	if err != nil {
		return ""
	}
	best := ""
	for _, m := range ms {
		base := filepath.Base(m.Path)
		if !libraryMatch(base, name) {
			continue
		}
		p := m.Readable()
		if base == name {
			return p
		}
		if best == "" {
			best = p
		}
	}
	return best
}

// cachedLibrary is the library of the loader's cache whose name answers
// to name and whose machine is the host's; "" for none.
func cachedLibrary(name string) string {
	ldconfig, err := exec.LookPath("ldconfig")
	if err != nil {
		if ldconfig, err = exec.LookPath("/sbin/ldconfig"); err != nil {
			return ""
		}
	}
	out, err := exec.Command(ldconfig, "-p").Output()
	if err != nil {
		return ""
	}
	best := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		// "\tlibc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6"
		lib, path, ok := strings.Cut(strings.TrimSpace(sc.Text()), " => ")
		if !ok {
			continue
		}
		soname, _, _ := strings.Cut(lib, " ")
		if !libraryMatch(soname, name) && !libraryMatch(filepath.Base(path), name) {
			continue
		}
		if !hostMachine(path) {
			continue
		}
		if soname == name {
			return path
		}
		if best == "" {
			best = path
		}
	}
	return best
}

// hostMachine reports whether the ELF file at path is for the machine
// this program runs on.
func hostMachine(path string) bool {
	f, err := elfx.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	a, err := arch.ForMachine(f.Machine)
	return err == nil && a.Name == arch.HostName()
}
