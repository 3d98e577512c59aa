package main

import (
	"io"
	"testing"
)

func BenchmarkZZFull(b *testing.B) {
	for range b.N {
		gopahole([]string{"/sys/kernel/btf/vmlinux"}, io.Discard, io.Discard)
	}
}

func BenchmarkZZHeader(b *testing.B) {
	for range b.N {
		gopahole([]string{"--format=c", "/sys/kernel/btf/vmlinux"}, io.Discard, io.Discard)
	}
}
