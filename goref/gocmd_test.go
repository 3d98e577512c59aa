package goref

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// fakeGo writes a go command into dir that runs script for the
// arguments it names and the real go command (from PATH) for the rest.
func fakeGo(t *testing.T, dir, script string) string {
	t.Helper()
	real, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(dir, "go")
	body := "#!/bin/sh\n" + script + "\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(fake, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return fake
}

// TestBuildErrorWhole: a reference build that fails with several lines of
// the compiler's errors is refused with one line that names the first
// error (not the "# package" line before it) and the file holding the go
// command's whole output; that file and the log hold every line of it.
func TestBuildErrorWhole(t *testing.T) {
	tmp := t.TempDir()
	bin := localProgram(t, tmp)
	errs := []string{
		"# binscope.local/ref",
		"./main.go:7:2: undefined: url.FirstMissing",
		"./main.go:8:2: undefined: url.SecondMissing",
		"./main.go:9:2: too many errors",
	}
	fail := "if [ \"$1\" = build ]; then\n"
	for _, l := range errs {
		fail += "\techo '" + l + "' >&2\n"
	}
	fail += "\texit 1\nfi"
	var log strings.Builder
	o := &Options{Go: fakeGo(t, tmp, fail), Log: &log, CacheDir: filepath.Join(tmp, "cache"), LocalToolchain: true}
	_, err := Build(bin, []string{"net/url.(*URL).Query"}, nil, o)
	if err == nil {
		t.Fatal("a failing reference build gave no error")
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || errors.Is(err, ErrUnavailable) || !strings.Contains(msg, errs[1]) {
		t.Errorf("want one line naming %q, got %q", errs[1], msg)
	}
	m := regexp.MustCompile(`whole output is in (\S+build\.log)\)`).FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("the error names no file with the whole output: %q", msg)
	}
	saved, err := os.ReadFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range errs {
		if !strings.Contains(string(saved), l+"\n") {
			t.Errorf("%s lacks %q:\n%s", m[1], l, saved)
		}
		if !strings.Contains(log.String(), l) {
			t.Errorf("the log lacks %q:\n%s", l, log.String())
		}
	}
}

// localProgram builds a stripped program of the local toolchain into dir.
func localProgram(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "src")
	os.Mkdir(src, 0o755)
	for name, text := range map[string]string{
		"main.go": "package main\n\nimport (\n\t\"fmt\"\n\t\"net/url\"\n)\n\nfunc main() {\n\tu, err := url.Parse(\"http://x/a?b=c\")\n\tfmt.Println(u.Query(), err)\n}\n",
		"go.mod":  "module example.com/local\n\ngo 1.21\n",
	} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "prog")
	cmd := exec.Command("go", "build", "-o", bin, "-ldflags=-s -w", "-trimpath", ".")
	cmd.Dir, cmd.Env = src, append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestDownloadProgress: while the go command downloads a toolchain it
// announced ("go: downloading go1.99.1 (linux/amd64)"), the log says so at
// once, then every few seconds how many bytes of it the module cache holds
// so far, growing as the archive grows.
func TestDownloadProgress(t *testing.T) {
	defer func(d time.Duration) { progressEvery = d }(progressEvery)
	progressEvery = 200 * time.Millisecond
	tmp := t.TempDir()
	modCache := filepath.Join(tmp, "mod")
	dir := filepath.Join(modCache, "cache", "download", "golang.org", "toolchain", "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(dir, "v0.0.1-go1.99.1.linux-amd64.zip123.tmp")
	// Three steps of 1.5 MB, each lasting a few reports.
	script := "if [ \"$1\" = download ]; then\n" +
		"\techo 'go: downloading go1.99.1 (linux/amd64)' >&2\n" +
		"\tfor i in 1 2 3; do head -c 1500000 /dev/zero >> " + part + "; sleep 0.7; done\n" +
		"\texit 0\nfi"
	var log strings.Builder
	o := &Options{Go: fakeGo(t, tmp, script), Log: &log}
	if _, _, err := goRun(o, modCache, tmp, os.Environ(), "download"); err != nil {
		t.Fatal(err)
	}
	said := log.String()
	if !strings.HasPrefix(said, "goref: downloading go1.99.1 (linux/amd64)\n") {
		t.Errorf("the download is not announced first:\n%s", said)
	}
	var sizes []string
	for _, m := range regexp.MustCompile(`(?m)^goref: downloading go1\.99\.1 \(linux/amd64\): (\S+) MB so far \(\d+ s\)$`).FindAllStringSubmatch(said, -1) {
		sizes = append(sizes, m[1])
	}
	if len(sizes) < 2 || sizes[0] == sizes[len(sizes)-1] || sizes[len(sizes)-1] != "4.5" {
		t.Errorf("want progress lines growing to 4.5 MB, got %v:\n%s", sizes, said)
	}
}
