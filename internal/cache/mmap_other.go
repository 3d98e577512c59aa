//go:build !unix

package cache

import (
	"os"
	"time"
)

// mapFile reads the file at p (no mapping on this system), and gives its
// modification time.
func mapFile(p string) (b []byte, mtime time.Time, unmap func(), err error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, mtime, nil, err
	}
	b, err = os.ReadFile(p)
	return b, st.ModTime(), func() {}, err
}

// Evict does nothing: Map read the entry into memory.
func Evict([]byte) {}

// FileResident is -1: the system does not say.
func FileResident() int { return -1 }
