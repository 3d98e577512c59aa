//go:build !unix

package testutil

// lockFile does nothing where advisory file locks are not available.
func lockFile(path string) (unlock func()) { return func() {} }
