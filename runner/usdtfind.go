package runner

import (
	"fmt"
	"os"
	"strconv"

	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/probe"
	"github.com/binscope/binscope/stack"
	"github.com/binscope/binscope/usdt"
)

// usdtFiles are the files to probe for definitions that are all USDT
// probes and name no file, process or command (bpftrace's
// usdt:*:PROVIDER:NAME): those, among the files the running processes
// map, whose notes hold a probe each definition names; none when a
// definition is no USDT probe. Errors: no such file (name it with -x).
func usdtFiles(defs []string) ([]string, error) {
	var pts []*probe.USDTPoint
	for _, def := range defs {
		d, err := probe.Parse(def)
		if err != nil || d.USDT == nil {
			return nil, nil
		}
		pts = append(pts, d.USDT)
	}
	if len(pts) == 0 {
		return nil, nil
	}
	var found []string
	for _, f := range mappedEverywhere() {
		if notesName(f, pts) {
			found = append(found, f)
		}
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("%s: no running process maps a file with such a USDT probe: name the file with -x (goprobe list -x FILE 'usdt:*' lists its probes)", pts[0])
	}
	return found, nil
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
