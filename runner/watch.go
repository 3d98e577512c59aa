package runner

import (
	"os"
	"syscall"
	"time"
)

// fileID tells one file from another at the same path.
type fileID struct {
	dev, ino uint64
	size     int64
	mtime    time.Time
}

func idOf(st os.FileInfo) fileID {
	id := fileID{size: st.Size(), mtime: st.ModTime()}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		id.dev, id.ino = uint64(sys.Dev), sys.Ino
	}
	return id
}

func statID(path string) (fileID, bool) {
	st, err := os.Stat(path)
	if err != nil {
		return fileID{}, false
	}
	return idOf(st), true
}

// watchPeriod is how often watchReplaced looks at the file; settle, how
// long a new identity must hold before it counts (a writer finishing).
var watchPeriod, settle = 200 * time.Millisecond, 50 * time.Millisecond

// watchReplaced calls replaced each time the file at path becomes another
// file (a new inode, or new contents), until stop is closed; it closes
// done when it returns.
func watchReplaced(stop, done chan struct{}, path string, replaced func()) {
	defer close(done)
	last, ok := statID(path)
	if !ok {
		return
	}
	t := time.NewTicker(watchPeriod)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			cur, ok := statID(path)
			if !ok || cur == last {
				continue
			}
			// Let a writer finish: the same identity twice in a row.
			time.Sleep(settle)
			if again, ok := statID(path); !ok || again != cur {
				continue
			}
			replaced()
			last = cur
		}
	}
}

// runningExes are the files every process runs now (/proc/PID/exe).
func runningExes() map[fileID]bool {
	out := map[fileID]bool{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		if st, err := os.Stat("/proc/" + e.Name() + "/exe"); err == nil {
			out[idOf(st)] = true
		}
	}
	return out
}
