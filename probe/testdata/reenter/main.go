// Build: go build -o reenter .
// Calls functions that start with Go's stack check in ways that make the
// check branch to morestack, which starts the function again: a tight loop
// long enough for the scheduler's preemption requests (loop), and deep
// recursion in goroutines, which grows their stacks (grow), through
// functions with a small, a large and a huge frame (the three shapes of
// the check). It prints how many calls it made of each, and with "log"
// every call of add and split with its argument and results (add: the sum
// after it too; an error as its dynamic type and data pointer).
package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
)

type acc struct{ n int }

var (
	adds, deeps, bigs, huges int64
	logging                  bool
	logMu                    sync.Mutex
	lines                    []string
	errOdd                   = errors.New("odd")
)

// add is an ordinary method that calls another: it has a frame and a
// stack check. Its results are an int and an error.
//
//go:noinline
func (a *acc) add(v int) (int, error) {
	atomic.AddInt64(&adds, 1)
	a.n += v
	var err error
	if v%2 != 0 {
		err = errOdd
	}
	r := a.note(v)
	if logging {
		logAdd(v, a.n, r, err)
	}
	return r, err
}

//go:noinline
func logAdd(v, n, r int, err error) {
	logMu.Lock()
	lines = append(lines, fmt.Sprintf("add v=%d n=%d r=%d err=%s", v, n, r, dynamic(err)))
	logMu.Unlock()
}

// dynamic is err's dynamic type and data pointer, or nil.
func dynamic(err error) string {
	if err == nil {
		return "nil"
	}
	return fmt.Sprintf("%T(%p)", err, err)
}

// split has named results: an int, a string and an error, which Go's
// register ABI returns in RAX, RBX and RCX (the string), RDI and RSI.
//
//go:noinline
func split(v int) (q int, s string, err error) {
	q, s = v/3, strconv.Itoa(v%3)
	if v%3 == 2 {
		err = errOdd
	}
	if logging {
		logMu.Lock()
		lines = append(lines, fmt.Sprintf("split v=%d q=%d s=%q err=%s", v, q, s, dynamic(err)))
		logMu.Unlock()
	}
	return q, s, err
}

//go:noinline
func (a *acc) note(v int) int { return a.n ^ v }

// deep recurses d levels, calling add at each: its frame is small.
//
//go:noinline
func deep(a *acc, d int) int {
	atomic.AddInt64(&deeps, 1)
	var pad [8]int
	pad[d%8] = d
	if d == 0 {
		return pad[0]
	}
	r, _ := a.add(d)
	return deep(a, d-1) + r + pad[(d+1)%8]
}

// big has a frame of a few hundred bytes (the check subtracts it first).
//
//go:noinline
func big(d int) int {
	atomic.AddInt64(&bigs, 1)
	var pad [48]int
	pad[d%48] = d
	if d == 0 {
		return pad[0]
	}
	return big(d-1) + pad[(d+7)%48]
}

// huge has a frame larger than 4 KiB (the check guards the subtraction).
//
//go:noinline
func huge(d int) int {
	atomic.AddInt64(&huges, 1)
	var pad [640]int
	pad[d%640] = d
	if d == 0 {
		return pad[0]
	}
	return huge(d-1) + pad[(d+7)%640]
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: reenter loop N [log] | grow GOROUTINES DEPTH [log]")
		os.Exit(2)
	}
	n, _ := strconv.Atoi(os.Args[2])
	logging = os.Args[len(os.Args)-1] == "log"
	switch os.Args[1] {
	case "loop":
		a := &acc{}
		for i := 0; i < n; i++ {
			a.add(i)
			split(i)
		}
	case "grow":
		depth, _ := strconv.Atoi(os.Args[3])
		var wg sync.WaitGroup
		for g := 0; g < n; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				deep(&acc{}, depth)
				big(depth)
				huge(depth / 8)
			}()
		}
		wg.Wait()
	}
	for _, l := range lines {
		fmt.Println(l)
	}
	fmt.Printf("calls add=%d deep=%d big=%d huge=%d\n", atomic.LoadInt64(&adds), atomic.LoadInt64(&deeps), atomic.LoadInt64(&bigs), atomic.LoadInt64(&huges))
}
