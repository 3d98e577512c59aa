package main

import (
	"io"
	"os"
	"testing"

	"github.com/binscope/binscope/loader"
)

// BenchmarkKernelText and BenchmarkKernelHeader run gopahole's full dump of
// the kernel's BTF and its C header in process, for profiling:
//
//	go test -run X -bench Kernel -benchtime 20x -cpuprofile cpu.prof ./cmd/gopahole
//
// bench/pahole.sh and bench/header.sh time the built command against the
// peers.
func BenchmarkKernelText(b *testing.B) { benchKernel(b) }

func BenchmarkKernelHeader(b *testing.B) { benchKernel(b, "--format=c") }

func benchKernel(b *testing.B, args ...string) {
	if _, err := os.Stat(loader.KernelBTF); err != nil {
		b.Skipf("no kernel BTF: %v", err)
	}
	for range b.N {
		if code := gopahole(append(args, loader.KernelBTF), io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}
