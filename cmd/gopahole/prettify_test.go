package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// TestPrettify: gopahole --prettify with pahole's record options over a
// file a C program wrote (a header whose data member spans records of two
// types) prints the records the program says it wrote, as JSON and as C.
func TestPrettify(t *testing.T) {
	dir := t.TempDir()
	bin, data := filepath.Join(dir, "events"), filepath.Join(dir, "events.data")
	src := filepath.Join(testutil.Root(t), "pretty", "testdata", "c", "events.c")
	if out, err := exec.Command("gcc", "-g", "-O0", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	truthOut, err := exec.Command(bin, data).Output()
	if err != nil {
		t.Fatal(err)
	}
	truth := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(truthOut)))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		truth[k] = v
	}
	class := "ev_header(sizeof,type,type_enum=ev_type,filter=type==EV_BAR)"
	code, out, errs := run("-C", class, "--header", "file_header", "--range", "data", "--prettify", data, "--json", bin)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	n := 0
	for ; dec.More(); n++ {
		var rec struct {
			Header struct {
				Type string `json:"type"`
				Misc int    `json:"misc"`
			} `json:"header"`
			Name string `json:"name"`
			Y    int64  `json:"y"`
		}
		if err := dec.Decode(&rec); err != nil {
			t.Fatal(err)
		}
		k := strconv.Itoa(n) + " "
		got := map[string]string{"header.type": rec.Header.Type, "header.misc": strconv.Itoa(rec.Header.Misc), "name": rec.Name, "y": strconv.FormatInt(rec.Y, 10)}
		for f, v := range got {
			if truth[k+f] != v {
				t.Errorf("record %d: %s = %q; the program wrote %q", n, f, v, truth[k+f])
			}
		}
	}
	if n != 3 {
		t.Errorf("%d records printed; the program wrote 3 EV_BAR records", n)
	}
	code, out, errs = run("-C", class, "--header", "file_header", "--range", "data", "--prettify", data, "--skip", "2", bin)
	if code != 0 || strings.Count(out, ".type = EV_BAR,") != 1 || !strings.Contains(out, `.name = "`+truth["2 name"]+`",`) {
		t.Errorf("--skip 2 in C syntax: exit %d, %s%s", code, out, errs)
	}
	for _, bad := range [][]string{
		{"--prettify", data, bin},
		{"-C", "ev_header(sizeof,bogus)", "--prettify", data, bin},
		{"-C", "ev_header", "--prettify", filepath.Join(dir, "missing"), bin},
	} {
		if code, out, errs := run(bad...); code == 0 || out != "" || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want one line and a failure", bad, code, out, errs)
		}
	}
	_ = os.Remove(data)
}
