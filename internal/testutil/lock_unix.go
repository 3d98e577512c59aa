//go:build unix

package testutil

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on path (creating it) and
// returns the function that releases it. Failing to lock is not fatal: the
// builds then merely may run twice.
func lockFile(path string) (unlock func()) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return func() {}
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return func() {}
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
}
