package goref

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// progressEvery is how often a download that lasts is reported (a
// variable for the tests).
var progressEvery = 5 * time.Second

// goRun runs the go command in dir with env and returns its standard
// output and standard error, whole. While it runs, the go command's
// download notices ("go: downloading go1.21.0 (linux/amd64)", "go:
// downloading github.com/x/y v1.2.3") are relayed to o.Log as they come,
// and while a download lasts, a line every few seconds says how many
// bytes of it have arrived in the module cache (modCache), so that a
// toolchain's 70 to 150 MB do not pass in silence.
func goRun(o *Options, modCache, dir string, env []string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.Command(o.Go, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errOut bytes.Buffer
	cmd.Stdout = &out
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return "", "", err
	}
	if err := cmd.Start(); err != nil {
		return "", "", err
	}
	p := &progress{log: o.Log, modCache: modCache, done: make(chan struct{})}
	var wg sync.WaitGroup
	wg.Go(p.tick)
	sc := bufio.NewScanner(pipe)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		errOut.WriteString(line + "\n")
		if what, ok := strings.CutPrefix(line, "go: downloading "); ok {
			p.start(what)
		}
	}
	io.Copy(&errOut, pipe)
	err = cmd.Wait()
	close(p.done)
	wg.Wait()
	return out.String(), errOut.String(), err
}

// progress reports the downloads the go command announced.
type progress struct {
	log      io.Writer
	modCache string
	done     chan struct{}

	mu    sync.Mutex
	whats []string // "go1.21.0 (linux/amd64)", "github.com/x/y v1.2.3"
	since time.Time
	last  int64 // bytes at the last report
}

func (p *progress) start(what string) {
	if p.log == nil {
		return
	}
	p.mu.Lock()
	if len(p.whats) == 0 {
		p.since = time.Now()
	}
	p.whats = append(p.whats, what)
	p.mu.Unlock()
	fmt.Fprintf(p.log, "goref: downloading %s\n", what)
}

// tick says every few seconds how many bytes of the announced downloads
// have arrived, while they grow (afterwards the go command builds).
func (p *progress) tick() {
	t := time.NewTicker(progressEvery)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
		}
		p.mu.Lock()
		whats, since := append([]string(nil), p.whats...), p.since
		p.mu.Unlock()
		var n int64
		for _, w := range whats {
			n += downloaded(p.modCache, w)
		}
		if len(whats) == 0 || n == p.last {
			continue
		}
		p.last = n
		what := whats[0]
		if len(whats) > 1 {
			what = fmt.Sprintf("%d modules", len(whats))
		}
		fmt.Fprintf(p.log, "goref: downloading %s: %.1f MB so far (%.0f s)\n", what, float64(n)/1e6, time.Since(since).Seconds())
	}
}

// downloaded is how many bytes of what's archive the module cache holds,
// its temporary files included (the go command writes V.zip*.tmp, then
// renames it V.zip); 0 when it cannot tell.
func downloaded(modCache, what string) int64 {
	if modCache == "" {
		return 0
	}
	path, version, ok := strings.Cut(what, " ")
	if !ok {
		return 0
	}
	if strings.HasPrefix(path, "go1") && strings.HasPrefix(version, "(") {
		// A toolchain: the module golang.org/toolchain at
		// v0.0.1-go1.21.0.linux-amd64.
		platform := strings.ReplaceAll(strings.Trim(version, "()"), "/", "-")
		path, version = "golang.org/toolchain", "v0.0.1-"+path+"."+platform
	}
	dir := filepath.Join(modCache, "cache", "download", escape(path), "@v")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	prefix := escape(version) + ".zip"
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) && e.Name() != prefix+"hash" {
			if info, err := e.Info(); err == nil {
				n += info.Size()
			}
		}
	}
	return n
}
