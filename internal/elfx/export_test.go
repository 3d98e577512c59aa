package elfx

// Claim makes l claim size bytes of a section of compressed bytes, as a
// corrupt compression header would.
func (l *Lazy) Claim(size, compressed uint64) { l.size, l.prealloc = size, prealloc(size, compressed) }

// Allocated is the capacity of l's buffer.
func (l *Lazy) Allocated() int { return cap(l.buf) }

// SetAheadStep sets how many bytes InflateAhead inflates a step, and
// returns what sets it back.
func SetAheadStep(n int) func() {
	old := aheadStep
	aheadStep = n
	return func() { aheadStep = old }
}

// SetThroughRoom sets how much InflateInto's window inflates between
// slides, and returns what restores it.
func SetThroughRoom(n int) func() {
	old := throughRoom
	throughRoom = n
	return func() { throughRoom = old }
}
