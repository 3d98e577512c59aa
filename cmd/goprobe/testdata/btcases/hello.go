// Build: go build -o hello-go hello.go
// A Go program for listing: its functions and the runtime's.
package main

import "fmt"

//go:noinline
func fun1(n int) int { return n * 3 }

func main() { fmt.Println(fun1(14)) }
