package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// cephOSD is a large C++ service with its debug package (ceph-osd,
// ceph-osd-dbg: a 512 MB download that scripts/install-deps.sh leaves to
// bench/ and to whoever wants this test).
const cephOSD = "/usr/bin/ceph-osd"

// paholeClass is one class, struct or union as pahole prints it: its
// bases and, in order, each data member's name, offset and size.
type paholeClass struct {
	kind, bases string
	members     []paholeMember
}

type paholeMember struct {
	name         string
	offset, size int
}

var (
	classHead  = regexp.MustCompile(`^(struct|class|union) (.*?)(?: : (.*))? \{$`)
	classRow   = regexp.MustCompile(`^\t(\S.*?)\s*/\*\s*(\d+)(?::\s*\d+)?\s+(\d+)\s*\*/$`)
	scopeWord  = regexp.MustCompile(`\b[A-Za-z_]\w*::`)
	memberName = regexp.MustCompile(`(\w+)(?:\[\d*\])*(?::\d+)?;$`)
)

// readClasses reads the top-level types of a pahole-format dump by name,
// with namespaces left out (pahole 1.24 prints none; gopahole qualifies).
func readClasses(t *testing.T, path string) map[string][]paholeClass {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]paholeClass{}
	var cur *paholeClass
	var name string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if cur == nil {
			if m := classHead.FindStringSubmatch(line); m != nil {
				name = scopeWord.ReplaceAllString(m[2], "")
				cur = &paholeClass{kind: m[1], bases: scopeWord.ReplaceAllString(m[3], "")}
			}
			continue
		}
		if strings.HasPrefix(line, "}") {
			out[name] = append(out[name], *cur)
			cur = nil
			continue
		}
		if m := classRow.FindStringSubmatch(line); m != nil {
			decl := scopeWord.ReplaceAllString(m[1], "")
			mn := ""
			if n := memberName.FindStringSubmatch(decl); n != nil {
				mn = n[1]
			}
			off, _ := strconv.Atoi(m[2])
			size, _ := strconv.Atoi(m[3])
			cur.members = append(cur.members, paholeMember{mn, off, size})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameClass reports whether ours has theirs's bases and data members at
// the same offsets with the same sizes, and whether it does once the
// sizes pahole printed as 0 are left out.
func sameClass(theirs, ours paholeClass) (exact, unsized bool) {
	if theirs.kind != ours.kind || theirs.bases != ours.bases || len(theirs.members) != len(ours.members) {
		return false, false
	}
	exact, unsized = true, true
	for i, m := range theirs.members {
		o := ours.members[i]
		if m.name != o.name || m.offset != o.offset {
			return false, false
		}
		if m.size != o.size {
			exact = false
			unsized = unsized && m.size == 0
		}
	}
	return exact, unsized
}

// TestCephClasses: ceph-osd's C++ classes as pahole 1.24 prints them. Of
// the classes pahole prints once under a plain name, every third (over
// 200) is asked of gopahole -C; each must have pahole's kind, bases
// (with their access) and data members at pahole's offsets, with pahole's
// sizes except where pahole prints 0 for a member whose type it did not
// resolve in that compile unit (gdb's ptype /o class OSD gives tick_timer,
// a SafeTimer, 208 bytes at 64, the next member at 272, as we print). It
// takes minutes and gigabytes (pahole alone: 3 minutes, 6 GB), and runs
// only where ceph-osd and ceph-osd-dbg are installed.
func TestCephClasses(t *testing.T) {
	if testing.Short() {
		t.Skip("reads all of ceph-osd's 230 MB of DWARF with pahole and gopahole")
	}
	if _, err := os.Stat(cephOSD); err != nil {
		t.Skipf("ceph-osd not installed (apt-get install ceph-osd ceph-osd-dbg, 512 MB): %v", err)
	}
	if debug := testutil.DebugFile(cephOSD); debug == "" {
		t.Skip("ceph-osd-dbg not installed")
	}
	pahole, err := exec.LookPath("pahole")
	if err != nil {
		testutil.Skipf(t, "pahole not installed: %v", err)
	}
	dir := t.TempDir()
	dump := filepath.Join(dir, "pahole.txt")
	out, err := os.Create(dump)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(pahole, cephOSD)
	cmd.Stdout = out // stderr: pahole's complaints about tags it does not know
	if err := cmd.Run(); err != nil {
		t.Fatalf("pahole %s: %v", cephOSD, err)
	}
	out.Close()
	theirs := readClasses(t, dump)
	var names []string
	for n, cs := range theirs {
		if len(cs) == 1 && regexp.MustCompile(`^[A-Za-z_]\w*$`).MatchString(n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var picked []string
	for i := 0; i < len(names); i += 3 {
		picked = append(picked, names[i])
	}
	list := filepath.Join(dir, "names")
	if err := os.WriteFile(list, []byte(strings.Join(picked, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, got, errs := run("-C", "file://"+list, cephOSD)
	if code != 0 {
		t.Fatalf("gopahole -C file://: exit %d: %s", code, errs)
	}
	mine := filepath.Join(dir, "gopahole.txt")
	if err := os.WriteFile(mine, []byte(got), 0o644); err != nil {
		t.Fatal(err)
	}
	ours := readClasses(t, mine)
	same, unsized := 0, 0
	var wrong []string
	for _, n := range picked {
		exact, loose := false, false
		for _, c := range ours[n] {
			e, l := sameClass(theirs[n][0], c)
			exact, loose = exact || e, loose || l
		}
		switch {
		case exact:
			same++
		case loose:
			unsized++
		default:
			wrong = append(wrong, n)
		}
	}
	t.Logf("%d classes asked: %d the same, %d the same but for members pahole sizes 0", len(picked), same, unsized)
	if len(wrong) > 0 {
		t.Errorf("%d classes differ from pahole's: %v", len(wrong), wrong)
	}
	if same < 200 {
		t.Errorf("only %d classes the same as pahole's, want at least 200", same)
	}
}
