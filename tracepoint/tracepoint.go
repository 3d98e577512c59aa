// Package tracepoint reads the kernel's tracepoints from tracefs: where
// tracefs is (mounting it when it is not), and each event's ID and record
// layout from its format file, with every field typed from its C
// declaration. goprobe attaches to tracepoints beside uprobes with what this
// package reads; it never guesses a field: one the format does not describe
// in a way it understands is left out with the reason.
package tracepoint

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrNotFound says a tracepoint does not exist on the running kernel.
var ErrNotFound = errors.New("no such tracepoint")

// Event is a tracepoint and the layout of its records.
type Event struct {
	Group, Name string
	ID          uint32
	// Fields are the event's own fields (the common_ ones are left out).
	Fields []Field
	// Skipped names fields left out, with why.
	Skipped []string
}

// Field is one member of an event's record.
type Field struct {
	Name string
	Decl string // the C declaration's type: "int", "const char *", "char[16]"
	// Offset and Size locate the field in the record, in bytes.
	Offset, Size int
	Signed       bool
	// Elem is the element size of an array field (Decl ends in [N]); 0
	// otherwise.
	Elem int
	// DataLoc is set for a __data_loc field: the u32 at Offset holds the
	// data's offset in the record (low 16 bits) and its length (high 16).
	DataLoc bool
}

// Pointer reports whether the field is a pointer (into user memory for
// syscall arguments).
func (f Field) Pointer() bool { return strings.HasSuffix(strings.TrimSpace(f.Decl), "*") }

// Text reports whether the field holds characters: a char array or a
// __data_loc char[].
func (f Field) Text() bool {
	d := strings.TrimSpace(strings.TrimPrefix(f.Decl, "const "))
	return strings.HasPrefix(d, "char[")
}

// Dir returns where tracefs is mounted, mounting it at
// /sys/kernel/tracing when it is not (as perf and bpftrace do).
func Dir() (string, error) {
	if d, ok := mounted(); ok {
		return d, nil
	}
	const dir = "/sys/kernel/tracing"
	if err := syscall.Mount("nodev", dir, "tracefs", 0, ""); err != nil {
		return "", fmt.Errorf("tracefs is not mounted and mounting it at %s failed: %v (run as root, or mount -t tracefs nodev %s)", dir, err, dir)
	}
	return dir, nil
}

func mounted() (string, bool) {
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	debugfs := ""
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 3 {
			continue
		}
		switch fs[2] {
		case "tracefs":
			return fs[1], true
		case "debugfs":
			debugfs = filepath.Join(fs[1], "tracing")
		}
	}
	if debugfs != "" {
		if _, err := os.Stat(filepath.Join(debugfs, "events")); err == nil {
			return debugfs, true
		}
	}
	return "", false
}

// Split parses "group:name" (or "group/name").
func Split(s string) (group, name string, ok bool) {
	group, name, ok = strings.Cut(s, ":")
	if !ok {
		group, name, ok = strings.Cut(s, "/")
	}
	if !ok || group == "" || name == "" || strings.ContainsAny(name, ":/") || strings.Contains(group, "..") {
		return "", "", false
	}
	return group, name, true
}

// Read reads the event group:name from the tracefs at dir.
func Read(dir, group, name string) (*Event, error) {
	p := filepath.Join(dir, "events", group, name, "format")
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s:%s: %w on this kernel (see %s)", group, name, ErrNotFound, filepath.Join(dir, "available_events"))
	}
	if err != nil {
		return nil, fmt.Errorf("%s:%s: %v", group, name, err)
	}
	ev, err := Parse(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", p, err)
	}
	ev.Group, ev.Name = group, name
	return ev, nil
}

// Parse parses a tracefs format file.
func Parse(format string) (*Event, error) {
	ev := &Event{}
	seenID := false
	for _, line := range strings.Split(format, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "name:"):
			ev.Name = strings.TrimSpace(line[5:])
		case strings.HasPrefix(line, "ID:"):
			id, err := strconv.ParseUint(strings.TrimSpace(line[3:]), 10, 32)
			if err != nil {
				return nil, fmt.Errorf("bad ID line %q", line)
			}
			ev.ID, seenID = uint32(id), true
		case strings.HasPrefix(line, "field:"):
			f, err := parseField(line)
			if err != nil {
				ev.Skipped = append(ev.Skipped, err.Error())
				continue
			}
			if !strings.HasPrefix(f.Name, "common_") {
				ev.Fields = append(ev.Fields, f)
			}
		}
	}
	if !seenID {
		return nil, errors.New("no ID line: not a tracepoint format file")
	}
	return ev, nil
}

// parseField parses "field:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;".
func parseField(line string) (Field, error) {
	var f Field
	parts := strings.Split(line, ";")
	decl := strings.TrimSpace(strings.TrimPrefix(parts[0], "field:"))
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(strings.TrimSpace(p), ":")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return f, fmt.Errorf("%s: bad %s %q", decl, k, v)
		}
		switch k {
		case "offset":
			f.Offset = n
		case "size":
			f.Size = n
		case "signed":
			f.Signed = n != 0
		}
	}
	if strings.HasPrefix(decl, "__data_loc ") {
		f.DataLoc = true
		decl = strings.TrimPrefix(decl, "__data_loc ")
	}
	// The name is the last identifier, before any [N].
	arr := ""
	if strings.HasSuffix(decl, "]") {
		if i := strings.LastIndexByte(decl, '['); i >= 0 {
			decl, arr = strings.TrimSpace(decl[:i]), decl[i:]
		}
	}
	i := strings.LastIndexAny(decl, " *")
	if i < 0 || i == len(decl)-1 {
		return f, fmt.Errorf("field %q: no name", decl)
	}
	f.Name, f.Decl = decl[i+1:], strings.TrimSpace(decl[:i+1])+arr
	if f.DataLoc && !strings.HasSuffix(f.Decl, "[]") {
		return f, fmt.Errorf("__data_loc field %s: type %q is not an array", f.Name, f.Decl)
	}
	if arr != "" && !f.DataLoc {
		n, err := strconv.Atoi(strings.Trim(arr, "[]"))
		if err != nil || n <= 0 {
			return f, fmt.Errorf("field %s: array %s not understood", f.Name, arr)
		}
		if f.Size%n != 0 {
			return f, fmt.Errorf("field %s: %d bytes do not divide into %d elements", f.Name, f.Size, n)
		}
		f.Elem = f.Size / n
	}
	if f.Size <= 0 {
		return f, fmt.Errorf("field %s: size %d", f.Name, f.Size)
	}
	return f, nil
}

// Width is the bytes and signedness a scalar field's value has as its
// declaration says: a syscall tracepoint stores `int fd` in 8 unsigned
// bytes, but the value is an int. ok is false for types it does not know
// (the format's size and signedness are then the answer).
func (f Field) Width() (size int, signed, ok bool) {
	if f.Pointer() {
		return 8, false, true
	}
	d := strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimPrefix(f.Decl, "const "), "volatile ", "")), " ")
	switch d {
	case "char", "signed char", "s8", "__s8":
		return 1, true, true
	case "unsigned char", "u8", "__u8", "bool", "_Bool":
		return 1, false, true
	case "short", "short int", "s16", "__s16":
		return 2, true, true
	case "unsigned short", "unsigned short int", "u16", "__u16", "umode_t":
		return 2, false, true
	case "int", "s32", "__s32", "pid_t", "key_serial_t", "clockid_t", "timer_t", "mqd_t", "rwf_t", "qid_t", "uid_t", "gid_t":
		if d == "uid_t" || d == "gid_t" || d == "qid_t" {
			return 4, false, true
		}
		return 4, true, true
	case "unsigned int", "unsigned", "u32", "__u32", "fmode_t", "gfp_t", "dev_t":
		return 4, false, true
	case "long", "long int", "long long", "long long int", "s64", "__s64", "loff_t", "off_t", "ssize_t", "time_t":
		return 8, true, true
	case "unsigned long", "unsigned long int", "unsigned long long", "u64", "__u64", "size_t", "aio_context_t", "cap_user_header_t":
		return 8, false, true
	}
	return 0, false, false
}

// Field returns the event's field called name.
func (e *Event) Field(name string) (Field, bool) {
	for _, f := range e.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// FieldNames are the event's fields' names, in record order.
func (e *Event) FieldNames() []string {
	var out []string
	for _, f := range e.Fields {
		out = append(out, f.Name)
	}
	return out
}
