// Build: go build -o cpu .
// Spends its time in main -> outer -> inner for the seconds of CPU time
// given (default 1: as many samples however loaded the machine is), and
// prints how many calls it made.
package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// cpuTime is the process's CPU time, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

//go:noinline
func inner(x uint64) uint64 {
	for i := 0; i < 4000; i++ {
		x = (x*6364136223846793005 + 1442695040888963407) ^ (x >> 17)
	}
	return x
}

// Not a tail call: outer stays on the stack while inner runs.
//
//go:noinline
func outer(x uint64) uint64 {
	return inner(x) ^ 1
}

func main() {
	secs := 1.0
	if len(os.Args) > 1 {
		secs, _ = strconv.ParseFloat(os.Args[1], 64)
	}
	end := cpuTime() + time.Duration(secs*float64(time.Second))
	var x, calls uint64 = 1, 0
	for cpuTime() < end {
		for i := 0; i < 100; i++ {
			x = outer(x)
			calls++
		}
	}
	fmt.Println("calls", calls, "x", x)
}
