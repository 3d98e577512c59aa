package tracepoint_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binscope/binscope/btf"
	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/tracepoint"
	"github.com/binscope/binscope/types"
)

// TestFormatsAgainstBTF: every tracepoint's fields, read from its tracefs
// format file, sit at the offsets and sizes the kernel's BTF gives its
// record struct (trace_event_raw_NAME, with __data_loc_NAME for dynamic
// fields; syscalls' args[] of trace_event_raw_sys_enter).
func TestFormatsAgainstBTF(t *testing.T) {
	if os.Geteuid() != 0 {
		testutil.Skipf(t, "reading tracefs needs root")
	}
	dir, err := tracepoint.Dir()
	if err != nil {
		testutil.Skipf(t, "no tracefs: %v", err)
	}
	spec, err := btf.Load(btf.KernelBTF, nil)
	if err != nil {
		testutil.Skipf(t, "no kernel BTF: %v", err)
	}
	f, err := os.Open(filepath.Join(dir, "available_events"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	events, fields, syscalls := 0, 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		group, name, ok := tracepoint.Split(sc.Text())
		if !ok {
			t.Fatalf("available_events line %q", sc.Text())
		}
		ev, err := tracepoint.Read(dir, group, name)
		if err != nil {
			t.Errorf("%s:%s: %v", group, name, err)
			continue
		}
		if ev.ID == 0 {
			t.Errorf("%s:%s: no ID", group, name)
		}
		if group == "syscalls" && strings.HasPrefix(name, "sys_enter_") {
			for i, fl := range ev.Fields[1:] { // after __syscall_nr: args[i]
				if fl.Offset != 16+8*i || fl.Size != 8 {
					t.Errorf("%s: %s at %d, %d bytes; args[%d] is at %d, 8 bytes", name, fl.Name, fl.Offset, fl.Size, i, 16+8*i)
				}
				syscalls++
			}
			continue
		}
		var st *types.Struct
		for _, ty := range spec.Lookup("trace_event_raw_" + name) {
			if s, ok := ty.(*types.Struct); ok {
				st = s
			}
		}
		if st == nil {
			continue // the record struct is named after the event's class
		}
		events++
		for _, fl := range ev.Fields {
			want := fl.Name
			if fl.DataLoc {
				want = "__data_loc_" + fl.Name
			}
			var m *types.Member
			for i := range st.Members {
				if st.Members[i].Name == want {
					m = &st.Members[i]
				}
			}
			if m == nil {
				t.Errorf("%s:%s: field %s not in %s", group, name, want, st.Name)
				continue
			}
			size, _ := types.Sizeof(m.Type)
			if fl.DataLoc {
				size = 4
			}
			if m.BitSize != 0 || int(m.ByteOffset()) != fl.Offset || (int(size) != fl.Size && !strings.HasSuffix(fl.Decl, "[0]")) {
				t.Errorf("%s:%s: %s at %d, %d bytes; BTF says %d, %d", group, name, fl.Name, fl.Offset, fl.Size, m.ByteOffset(), size)
			}
			fields++
		}
	}
	if events < 200 || fields < 1000 || syscalls < 500 {
		t.Errorf("compared %d events, %d fields, %d syscall arguments: too few", events, fields, syscalls)
	}
	t.Logf("%d events, %d fields, %d syscall arguments agree with BTF", events, fields, syscalls)
}

func TestParse(t *testing.T) {
	ev, err := tracepoint.Parse(`name: x
ID: 7
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:int fd;	offset:16;	size:8;	signed:0;
	field:const char * filename;	offset:24;	size:8;	signed:0;
	field:char comm[16];	offset:32;	size:16;	signed:0;
	field:__data_loc unsigned int[] lengths;	offset:48;	size:4;	signed:0;
`)
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, f := range ev.Fields {
		size, signed, _ := f.Width()
		got += f.Name + ":" + f.Decl + ":" + strings.Repeat("p", b2i(f.Pointer())) + strings.Repeat("t", b2i(f.Text())) + strings.Repeat("d", b2i(f.DataLoc)) + ":" + string(rune('0'+size)) + strings.Repeat("s", b2i(signed)) + " "
	}
	want := "fd:int::4s filename:const char *:p:8 comm:char[16]:t:0 lengths:unsigned int[]:d:0 "
	if ev.ID != 7 || got != want {
		t.Errorf("ID %d, fields %q; want 7, %q", ev.ID, got, want)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
