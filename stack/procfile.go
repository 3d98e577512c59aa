package stack

import (
	"fmt"
	"os"
	"sync"
	"syscall"
)

// SameRoot reports whether process pid resolves paths as this process
// does: the same mount namespace and root directory.
func SameRoot(pid int) bool {
	self, err1 := os.Readlink("/proc/self/ns/mnt")
	other, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", pid))
	if err1 != nil || err2 != nil || self != other {
		return err2 != nil // a process gone: nothing better to read
	}
	root, err := os.Readlink(fmt.Sprintf("/proc/%d/root", pid))
	return err != nil || root == "/"
}

type fileID struct{ dev, ino uint64 }

var kept struct {
	sync.Mutex
	files map[fileID]*os.File
}

// keptOpen opens path once per file (by device and inode) and returns
// /proc/self/fd/N; "" when it cannot be opened. A file of a process in
// another mount namespace (a container: the file may exist only there, or
// be another file here) is opened through /proc/PID/root and kept open for
// the rest of the run, so that its code can still be named after the
// process and its mount namespace are gone.
func keptOpen(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	st, ok := statID(f)
	if !ok {
		f.Close()
		return ""
	}
	kept.Lock()
	defer kept.Unlock()
	if old, ok := kept.files[st]; ok {
		f.Close()
		f = old
	} else {
		if kept.files == nil {
			kept.files = map[fileID]*os.File{}
		}
		kept.files[st] = f
	}
	return fmt.Sprintf("/proc/self/fd/%d", f.Fd())
}

func statID(f *os.File) (fileID, bool) {
	fi, err := f.Stat()
	if err != nil {
		return fileID{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), st.Ino}, true
}
