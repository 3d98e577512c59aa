// A cgo program shaped like the Go services distributions ship, built by
// internal/testutil.BuildCgoWork with several Go toolchains and link modes
// (internal, external, PIE, -s -w, PIE with -s -w): for example
//
//	CGO_ENABLED=1 go build -ldflags='-s -w -linkmode=external' -o app .
//
// `app N` calls work and mix (inlined) N times each and prints the total; `app funcs` prints, for
// a few functions, the runtime's own name, entry address and line
// (FuncForPC) and the start of the mapping of the executable's first page, from which
// a test gets each function's address in the file. `app profile FILE`
// writes the runtime's goroutine profile to FILE while a goroutine waits
// in waiter.Wait, called through the pointer wrapper (*waiter).Wait.
package main

// static int twice(int x) { return 2 * x; }
import "C"

import (
	"bufio"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
)

//go:noinline
func work(i int) int { return i*3 + 1 }

// mix is inlined into main (go build -gcflags=-m: "inlining call to mix").
func mix(i int) int { return i ^ 5 }

func main() {
	if len(os.Args) > 1 && os.Args[1] == "funcs" {
		funcs()
		return
	}
	if len(os.Args) > 2 && os.Args[1] == "profile" {
		goroutines(os.Args[2])
		return
	}
	n, err := strconv.Atoi(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "usage: app N | app funcs")
		os.Exit(2)
	}
	total := 0
	for i := 0; i < n; i++ {
		total += work(i) + mix(i)
	}
	total += int(C.twice(1))
	fmt.Println(total)
}

// funcs prints "base ADDR" (where the executable's first page is mapped)
// and then "NAME ENTRY FILE:LINE" for a few functions, as the runtime
// knows them.
func funcs() {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		panic(err)
	}
	exe, _ := os.Executable()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fs := strings.Fields(s.Text())
		if len(fs) >= 6 && fs[5] == exe && fs[2] == "00000000" {
			fmt.Println("base", "0x"+strings.SplitN(fs[0], "-", 2)[0])
			break
		}
	}
	for _, fn := range []interface{}{work, main, funcs, fmt.Println, strconv.Atoi, runtime.GC, strings.Fields, bufio.NewScanner} {
		pc := reflect.ValueOf(fn).Pointer()
		rf := runtime.FuncForPC(pc)
		file, line := rf.FileLine(rf.Entry())
		fmt.Printf("%s %#x %s:%d\n", rf.Name(), rf.Entry(), file, line)
	}
}

type waiter struct{ c chan int }

// Wait is inlined into the wrapper the compiler makes for *waiter, which
// the runtime leaves out of its stacks.
func (w waiter) Wait() int { return <-w.c }

type waits interface{ Wait() int }

// waitsOf hides the interface's dynamic type from the caller, which would
// otherwise call waiter.Wait directly (devirtualized).
//
//go:noinline
func waitsOf(w *waiter) waits { return w }

// goroutines writes the goroutine profile to path while a goroutine waits
// in waiter.Wait, called through the interface, so through (*waiter).Wait.
func goroutines(path string) {
	ptr := &waiter{c: make(chan int)}
	w := waitsOf(ptr)
	done := make(chan int)
	go func() { done <- w.Wait() }()
	time.Sleep(100 * time.Millisecond) // it blocks in the receive
	f, err := os.Create(path)
	if err != nil {
		panic(err)
	}
	if err := pprof.Lookup("goroutine").WriteTo(f, 0); err != nil {
		panic(err)
	}
	f.Close()
	ptr.c <- 1
	<-done
}
