// Command soak is bench/soak.sh's Go HTTP server and its load generator.
//
//	soak server ADDR                      serves / (each request through main.handle) and
//	                                      /count (the requests / served, its own count)
//	soak load URL SECONDS RATE WORKERS    GETs URL at most RATE times a second from WORKERS
//	                                      goroutines for SECONDS; prints requests, errors and
//	                                      latency percentiles (microseconds)
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

var served atomic.Uint64

// handle is the function goprobe counts: one call per request to /.
//
//go:noinline
func handle(w http.ResponseWriter, r *http.Request) {
	served.Add(1)
	io.WriteString(w, "ok\n")
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: soak server ADDR | soak load URL SECONDS RATE WORKERS")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "server":
		http.HandleFunc("/", handle)
		http.HandleFunc("/count", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintln(w, served.Load())
		})
		if err := http.ListenAndServe(os.Args[2], nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	case "load":
		secs, _ := strconv.ParseFloat(os.Args[3], 64)
		rate, _ := strconv.Atoi(os.Args[4])
		workers, _ := strconv.Atoi(os.Args[5])
		load(os.Args[2], time.Duration(secs*float64(time.Second)), rate, workers)
	}
}

func load(url string, d time.Duration, rate, workers int) {
	tick := time.NewTicker(time.Second / time.Duration(max(rate, 1)))
	defer tick.Stop()
	end := time.Now().Add(d)
	tokens := make(chan struct{}, workers)
	go func() {
		for range tick.C {
			if time.Now().After(end) {
				close(tokens)
				return
			}
			select {
			case tokens <- struct{}{}:
			default: // the workers are behind: the load stays bounded
			}
		}
	}()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	var mu sync.Mutex
	var lat []time.Duration
	var errs, reqs uint64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var mine []time.Duration
			var bad, n uint64
			for range tokens {
				t0 := time.Now()
				resp, err := client.Get(url)
				n++
				if err != nil {
					bad++
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat, errs, reqs = append(lat, mine...), errs+bad, reqs+n
			mu.Unlock()
		})
	}
	wg.Wait()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds())
	}
	fmt.Printf("requests %d errors %d p50_us %.0f p90_us %.0f p99_us %.0f\n", reqs, errs, pct(0.5), pct(0.9), pct(0.99))
}
