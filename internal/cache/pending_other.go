//go:build !linux

package cache

// Pending is an entry being written in place (Linux only: see
// pending_linux.go); Create never makes one here.
type Pending struct {
	Data []byte
}

// Create reports false: the caller keeps its data on the heap and writes
// the entry with PutParts.
func (c *Cache) Create(kind string, version uint32, key string, size int) (*Pending, bool) {
	return nil, false
}

// WriteAt does nothing.
func (e *Pending) WriteAt(b []byte, off int64) error { return nil }

// Commit does nothing.
func (e *Pending) Commit() {}

// Abort does nothing.
func (e *Pending) Abort() {}

// Release does nothing.
func (e *Pending) Release() {}
