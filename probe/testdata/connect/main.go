// Increments a counter and connects to a local listener, N times (the
// first argument), and prints its own record of what it did, in order, on
// stderr: "inc BY" before each increment, "connect FD" for each connection
// (the socket its connect(2) ran on) — the truth of goprobe's timeline of
// main.(*counter).Inc and syscalls:sys_enter_connect.
// build: go build -o connect .
package main

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"syscall"
)

type counter struct{ n int }

//go:noinline
func (c *counter) Inc(by int) { c.n += by }

func main() {
	runtime.LockOSThread()
	n, _ := strconv.Atoi(os.Args[1])
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	c := &counter{}
	var conns []net.Conn
	for i := 0; i < n; i++ {
		by := i%3 + 1
		fmt.Fprintf(os.Stderr, "inc %d\n", by)
		c.Inc(by)
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			panic(err)
		}
		raw, err := conn.(*net.TCPConn).SyscallConn()
		if err != nil {
			panic(err)
		}
		raw.Control(func(fd uintptr) { fmt.Fprintf(os.Stderr, "connect %d\n", fd) })
		if i%2 == 1 {
			conns = append(conns, conn) // kept open: the next socket gets another fd
		} else {
			conn.Close()
		}
	}
	for _, conn := range conns {
		conn.Close()
	}
	_ = syscall.Getpid()
	fmt.Println("total", c.n)
}
