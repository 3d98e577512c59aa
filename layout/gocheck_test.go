package layout_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/layout"
	"github.com/binscope/binscope/types"
)

// goSpelling turns a type as the native printer spells it into Go source
// valid inside the go-layouts fixture's package main.
var goSpelling = strings.NewReplacer(
	"main.", "",
	"example.com/fixture/inner.", "inner.",
	"sync/atomic.", "atomic.",
)

// TestGoNativeCompiles prints the Go fixture's structs in Go syntax, as they
// are and in the order Reorganize suggests, compiles them into a copy of
// the fixture's package and requires the Go compiler (unsafe.Sizeof,
// unsafe.Offsetof, and the runtime type's PtrBytes for the pointer bytes)
// to agree with the layouts.
func TestGoNativeCompiles(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		testutil.Skipf(t, "go not installed: %v", err)
	}
	b := testutil.Fixture(t, "go-layouts")
	spec := load(t, b.Path)
	var decls, checks strings.Builder
	want := map[string]string{}
	moved := 0
	add := func(tag string, l *layout.Layout, text string) {
		name := goSpelling.Replace(l.Name) + "__" + tag
		lines := strings.Split(text, "\n")
		fmt.Fprintf(&decls, "type %s struct {\n", name)
		for _, line := range lines[1:] {
			code, _, _ := strings.Cut(line, "//")
			if strings.TrimSpace(code) == "" {
				continue
			}
			if strings.HasPrefix(code, "}") {
				break
			}
			decls.WriteString(goSpelling.Replace(code) + "\n")
		}
		decls.WriteString("}\n\n")
		fmt.Fprintf(&checks, "\t{\n\t\tvar v %s\n\t\tfmt.Println(%q, unsafe.Sizeof(v))\n", name, name+" size")
		want[name+" size"] = strconv.FormatInt(l.Size, 10)
		fmt.Fprintf(&checks, "\t\tfmt.Println(%q, ptrBytes(v))\n", name+" pointer bytes")
		want[name+" pointer bytes"] = strconv.FormatInt(l.PointerBytes, 10)
		for i := range l.Members {
			s := &l.Members[i]
			field := s.Name()
			if s.Member.Embedded {
				field = types.ShortName(goSpelling.Replace(types.TypeString(s.Member.Type)))
			}
			if field == "_" || field == "" {
				continue
			}
			key := name + "." + field
			fmt.Fprintf(&checks, "\t\tfmt.Println(%q, unsafe.Offsetof(v.%s))\n", key, field)
			want[key] = strconv.FormatInt(s.Offset, 10)
		}
		checks.WriteString("\t}\n")
	}
	for _, ty := range spec.Types() {
		s, ok := ty.(*types.Struct)
		if !ok || s.Incomplete || !strings.HasPrefix(s.Name, "main.") || strings.ContainsAny(s.Name, "[]") ||
			strings.HasPrefix(s.Name, "main.Truth") || s.GoKind != types.GoStruct {
			continue
		}
		l, err := layout.Analyze(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		var text bytes.Buffer
		if err := layout.WriteNative(&text, l, nil); err != nil {
			t.Fatal(err)
		}
		add("orig", l, text.String())
		r := layout.Reorganize(l, nil)
		if !r.Moved {
			continue
		}
		moved++
		text.Reset()
		if err := layout.WriteReorganized(&text, r, &layout.PrintOptions{Native: true}); err != nil {
			t.Fatal(err)
		}
		add("reorg", r.Layout, text.String())
	}
	if moved < 5 {
		t.Errorf("only %d Go types reorganized", moved)
	}
	dir := filepath.Join(t.TempDir(), "go-layouts")
	if err := os.CopyFS(dir, os.DirFS(b.Dir)); err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf(`package main

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"unsafe"

	"example.com/fixture/inner"
)

var (
	_ io.Reader
	_ atomic.Int64
	_ inner.T
)

// ptrBytes reads the runtime's PtrBytes of v's type: the second word of
// the type descriptor, after its size.
func ptrBytes(v any) uintptr {
	type eface struct{ typ, data unsafe.Pointer }
	return (*[2]uintptr)((*eface)(unsafe.Pointer(&v)).typ)[1]
}

%s
func init() {
	if os.Getenv("LAYOUT_CHECK") == "" {
		return
	}
%s	os.Exit(0)
}
`, decls.String(), checks.String())
	if err := os.WriteFile(filepath.Join(dir, "zz_check.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goBin, "run", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LAYOUT_CHECK=1", "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run: %v\n%s\n%s", err, stderr.Bytes(), src)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		i := strings.LastIndexByte(line, ' ')
		got[line[:i]] = line[i+1:]
	}
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if got[k] != want[k] {
			t.Errorf("%s: the Go compiler says %s, layout says %s", k, got[k], want[k])
		}
	}
	t.Logf("%d sizes and offsets checked, %d types reorganized", len(want), moved)
}
