//go:build !unix

package cache

import "os"

// mapFile reads the file at p (no mapping on this system).
func mapFile(p string) (b []byte, unmap func(), err error) {
	b, err = os.ReadFile(p)
	return b, func() {}, err
}

// Evict does nothing: Map read the entry into memory.
func Evict([]byte) {}
