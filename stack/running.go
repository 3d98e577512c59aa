package stack

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// settle is how long a process is looked at again after it was first
// seen running another program: a fork execs its program soon after.
const settle = 2 * time.Second

// Running finds the processes that run one executable file, those
// running now and, called again, those started since, so that each can
// be given its unwind tables as it starts.
type Running struct {
	id   fileID
	seen map[int]seen
}

type seen struct {
	match bool
	first time.Time // first looked at
	since time.Time // found running the file
}

// NewRunning follows the processes running path; nil when path cannot
// be read.
func NewRunning(path string) *Running {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return nil
	}
	return &Running{id: fileID{uint64(st.Dev), st.Ino}, seen: map[int]seen{}}
}

// New lists the processes running the file (by device and inode, whatever
// path or mount namespace they run it from) that were found within the
// last settle period: each is listed at every call for that long, so that
// the libraries the loader maps after the first look reach the unwinder
// too. Processes seen running another program are looked at again for a
// while (an exec after a fork); those gone are forgotten.
func (r *Running) New() []int {
	if r == nil {
		return nil
	}
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	now := time.Now()
	alive := make(map[int]bool, len(names))
	var out []int
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		alive[pid] = true
		s, ok := r.seen[pid]
		if ok && s.match {
			if now.Sub(s.since) <= settle {
				out = append(out, pid)
			}
			continue
		}
		if ok && now.Sub(s.first) > settle {
			continue
		}
		if !ok {
			s.first = now
		}
		var st syscall.Stat_t
		s.match = syscall.Stat(fmt.Sprintf("/proc/%d/exe", pid), &st) == nil && fileID{uint64(st.Dev), st.Ino} == r.id
		if s.match {
			s.since = now
			out = append(out, pid)
		}
		r.seen[pid] = s
	}
	for pid := range r.seen {
		if !alive[pid] {
			delete(r.seen, pid)
		}
	}
	return out
}
