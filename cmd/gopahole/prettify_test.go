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

// rangeSrc has a file header whose data member gives the offset and size
// of the records that follow it.
const rangeSrc = `struct data_range { unsigned int offset; unsigned int size; };
struct file_header { unsigned int magic; unsigned int version; struct data_range data; };
struct data_record { int id; int value; char name[8]; };
struct file_header g_hdr; struct data_record g_rec;
`

// TestPrettifySeekSize: --seek_bytes and --size_bytes, as numbers and as
// $header.member, --header_type (--header) alone and with --range print
// what pahole 1.24 prints of a 16-byte header and one record.
func TestPrettifySeekSize(t *testing.T) {
	dir := t.TempDir()
	obj := compileObj(t, dir, "range", rangeSrc)
	data := filepath.Join(dir, "range.bin")
	raw := []byte{0x78, 0x56, 0x34, 0x12, 1, 0, 0, 0, 16, 0, 0, 0, 16, 0, 0, 0, 42, 0, 0, 0, 100, 0, 0, 0}
	if err := os.WriteFile(data, append(raw, "testREC\x00"...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-C", "data_record", "--seek_bytes=16"},
		{"-C", "data_record", "--seek_bytes=16", "--size_bytes=16"},
		{"-C", "data_record", "--header=file_header", "--seek_bytes=$header.data.offset", "--size_bytes=$header.data.size"},
		{"-C", "data_record", "--header=file_header", "--range=data"},
		{"--header=file_header"},
	} {
		args = append(args, "--prettify", data, obj)
		want := paholeOut(t, args...)
		if !strings.Contains(want, " = ") {
			t.Fatalf("pahole %v printed no record:\n%s", args, want)
		}
		samePahole(t, args...)
		alias := strings.Join(args, "\x00")
		alias = strings.ReplaceAll(alias, "--header=", "--header_type=")
		if code, got, errs := run(strings.Split(alias, "\x00")...); code != 0 || got != want {
			t.Errorf("--header_type: exit %d %s\n%s", code, errs, got)
		}
	}
}
