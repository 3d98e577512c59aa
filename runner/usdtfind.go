package runner

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/probe"
	"github.com/binscope/binscope/stack"
	"github.com/binscope/binscope/usdt"
)

// usdtFile is the file to probe for definitions that are all USDT probes
// and name no file, process or command (bpftrace's usdt:*:PROVIDER:NAME):
// the one file, among those the running processes map, whose notes hold
// a probe each definition names. "" when a definition is no USDT probe.
// Errors: no such file (name it with -x), or several (a run probes one
// file: each is named).
func usdtFile(defs []string) (string, error) {
	var pts []*probe.USDTPoint
	for _, def := range defs {
		d, err := probe.Parse(def)
		if err != nil || d.USDT == nil {
			return "", nil
		}
		pts = append(pts, d.USDT)
	}
	if len(pts) == 0 {
		return "", nil
	}
	var found []string
	for _, f := range mappedEverywhere() {
		if notesName(f, pts) {
			found = append(found, f)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%s: no running process maps a file with such a USDT probe: name the file with -x (goprobe list -x FILE 'usdt:*' lists its probes)", pts[0])
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%s: %d files that running processes map hold it (%s); a run probes one file: name one with -x", pts[0], len(found), strings.Join(found, ", "))
}

// mappedEverywhere are the files the running processes map executable,
// each once (by device and inode), by a path this process opens.
func mappedEverywhere() []string {
	ents, _ := os.ReadDir("/proc")
	seen := map[fileID]bool{}
	var files []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		ms, _ := stack.ProcMappings(pid)
		for _, m := range ms {
			id, ok := statID(m.Readable())
			if !ok || seen[id] {
				continue
			}
			seen[id] = true
			files = append(files, m.Readable())
		}
	}
	return files
}

// notesName reports whether file's USDT notes hold a probe each of pts
// names.
func notesName(file string, pts []*probe.USDTPoint) bool {
	ef, err := elfx.Open(file)
	if err != nil {
		return false
	}
	defer ef.Close()
	ps, err := usdt.Read(ef)
	if err != nil {
		return false
	}
	for _, pt := range pts {
		if len(pt.In(ps)) == 0 {
			return false
		}
	}
	return true
}
