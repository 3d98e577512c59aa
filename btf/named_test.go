package btf

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/types"
)

// bpftoolTypes lists the kernel's named types as bpftool prints them:
// kind, name, size and member count, by type ID.
func bpftoolTypes(t *testing.T) map[uint32][4]string {
	t.Helper()
	if _, err := os.Stat(KernelBTF); err != nil {
		testutil.Skipf(t, "no kernel BTF: %v", err)
	}
	bpftool, err := exec.LookPath("bpftool")
	if err != nil {
		testutil.Skipf(t, "bpftool not installed: %v", err)
	}
	out, err := exec.Command(bpftool, "btf", "dump", "file", KernelBTF).Output()
	if err != nil {
		t.Fatalf("bpftool: %v", err)
	}
	re := regexp.MustCompile(`^\[(\d+)\] (STRUCT|UNION|ENUM|ENUM64|TYPEDEF) '([^'(][^']*)'(?: size=(\d+) vlen=(\d+))?`)
	got := map[uint32][4]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			id, _ := strconv.ParseUint(m[1], 10, 32)
			got[uint32(id)] = [4]string{m[2], m[3], m[4], m[5]}
		}
	}
	return got
}

// TestNamedCompositesKernel: the header walk that lets -C and full dumps
// skip functions finds exactly the named composites bpftool lists (it once
// stopped at the kernel's first typedef, and every load decoded everything).
func TestNamedCompositesKernel(t *testing.T) {
	want := bpftoolTypes(t)
	raw, err := os.ReadFile(KernelBTF)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := namedComposites(raw)
	if err != nil {
		t.Fatalf("namedComposites: %v", err)
	}
	if len(want) < 10000 {
		t.Fatalf("bpftool lists only %d named types", len(want))
	}
	seen := map[uint32]bool{}
	for _, id := range ids {
		if _, ok := want[id]; !ok {
			t.Errorf("type %d: not a named composite for bpftool", id)
		}
		seen[id] = true
	}
	for id, w := range want {
		if !seen[id] {
			t.Errorf("type %d (%s %s): missed", id, w[0], w[1])
		}
	}
}

// TestLoadNamedKernel: gopahole -C's path through the kernel's BTF loads
// the named types with the sizes and member counts bpftool gives.
func TestLoadNamedKernel(t *testing.T) {
	want := bpftoolTypes(t)
	byName := map[string][][4]string{}
	for _, w := range want {
		byName[w[1]] = append(byName[w[1]], w)
	}
	var names []string
	for n, ws := range byName {
		if len(ws) == 1 && (ws[0][0] == "STRUCT" || ws[0][0] == "UNION") && len(names) < 200 {
			names = append(names, n)
		}
	}
	names = append(names, "task_struct", "sk_buff")
	spec, ok, err := LoadNamed(KernelBTF, names, nil)
	if err != nil || !ok {
		t.Fatalf("LoadNamed: ok %v, %v", ok, err)
	}
	checked := 0
	for _, n := range names {
		w := byName[n][0]
		var s *types.Struct
		for _, ty := range spec.Lookup(n) {
			if st, ok := ty.(*types.Struct); ok {
				s = st
			}
		}
		if s == nil {
			t.Errorf("%s: not loaded", n)
			continue
		}
		size, _ := strconv.ParseInt(w[2], 10, 64)
		vlen, _ := strconv.Atoi(w[3])
		if s.ByteSize != size || len(s.Members) != vlen {
			t.Errorf("%s: size %d, %d members; bpftool: %d, %d", n, s.ByteSize, len(s.Members), size, vlen)
		}
		checked++
	}
	if checked < 100 {
		t.Errorf("only %d types checked", checked)
	}
	if _, ok, _ := LoadNamed(KernelBTF, []string{"task_struct", "no_such_type_here"}, nil); ok {
		t.Errorf("a missing name must fall back to the whole load (for suggestions)")
	}
}
