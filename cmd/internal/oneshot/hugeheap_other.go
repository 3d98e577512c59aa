//go:build !linux

package oneshot

func hugeHeap(n int) {}
