package runner

import (
	"debug/elf"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/internal/naming"
	"github.com/binscope/binscope/internal/usage"
	"github.com/binscope/binscope/stack"
)

// cutLibrary takes a library prefix off a definition, LIB:POINT
// ('libc.so.6:mall* size', 'libc:fread'): LIB is a shared object's name
// (it holds ".so", or is a "lib" stem, as bpftrace's uprobe:libc:fread),
// or a path, never a function, file or USDT probe of POINT's.
func cutLibrary(def string) (lib, rest string, ok bool) {
	def = strings.TrimLeft(def, " \t")
	if strings.HasPrefix(def, "usdt:") {
		return "", def, false
	}
	end := strings.IndexAny(def, " \t")
	if end < 0 {
		end = len(def)
	}
	i := strings.IndexByte(def[:end], ':')
	if i <= 0 || i+1 >= end || def[i+1] == ':' || def[i-1] == ':' {
		return "", def, false
	}
	prefix := def[:i]
	if !strings.Contains(prefix, ".so") && !strings.HasPrefix(prefix, "/") && !libraryStem(prefix) || allDigits(def[i+1:end]) {
		return "", def, false
	}
	return prefix, def[i+1:], true
}

// libraryStem reports whether s is a library's name without its .so
// ("libc", "libstdc++"): "lib" then a name's characters.
func libraryStem(s string) bool {
	rest, ok := strings.CutPrefix(s, "lib")
	return ok && rest != "" && strings.Trim(rest, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+.") == ""
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// libraryTarget picks the file the definitions' LIB: prefixes name (see
// cutLibrary) among the files process PID maps, or with a command the
// files the dynamic loader loads for target, and takes the prefixes off
// o.Defs; "" when no definition has one. Every prefix must name the
// same one file: a run probes one file.
func (o *Options) libraryTarget(target string) (string, error) {
	var lib string
	defs := append([]string(nil), o.Defs...)
	for i, d := range defs {
		l, rest, ok := cutLibrary(d)
		if !ok {
			continue
		}
		if lib != "" && l != lib {
			return "", usage.Errorf("%q and %q name two libraries: a run probes one file", lib, l)
		}
		lib, defs[i] = l, rest
	}
	if lib == "" {
		return "", nil
	}
	var files []string
	if o.PID > 0 {
		files = append([]string{target}, mappedFiles(o.PID, target)...)
	} else {
		files = stack.LoadedFiles(target)
	}
	pat := naming.NewPattern(lib)
	var found []string
	for _, f := range files {
		if pat.Match(f) || pat.Match(filepath.Base(f)) || pat.Match(soname(f)) || libraryMatch(filepath.Base(f), lib) {
			found = append(found, f)
		}
	}
	switch {
	case len(found) == 0 && o.PID > 0:
		return "", fmt.Errorf("%s: process %d maps no such file (goprobe list -p %d lists the USDT probes of those it maps; /proc/%d/maps all of them)", lib, o.PID, o.PID, o.PID)
	case len(found) == 0:
		return "", fmt.Errorf("%s: %s loads no such library (ldd %s lists them)", lib, target, target)
	case len(found) > 1:
		return "", fmt.Errorf("%s names %d files: %s; name one (a run probes one file)", lib, len(found), strings.Join(found, ", "))
	}
	o.Defs = defs
	return found[0], nil
}

// soname is a shared object's DT_SONAME, or "".
func soname(path string) string {
	ef, err := elfx.Open(path)
	if err != nil {
		return ""
	}
	defer ef.Close()
	if ef.Type != elf.ET_DYN {
		return ""
	}
	s, _ := ef.DynString(elf.DT_SONAME)
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
