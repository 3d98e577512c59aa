package pretty

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/binscope/binscope/types"
)

// Class is a -C argument as pahole's --prettify takes it:
// NAME(sizeof[=MEMBER],type[=MEMBER],type_enum=ENUM,filter=MEMBER==VALUE).
type Class struct {
	Name string
	// Sizeof names the member holding each record's size in bytes
	// (variable-sized records); "" means every record is sizeof(Name).
	Sizeof string
	// Type names the member whose value, through TypeEnum, selects the
	// type a record is printed as: the struct named as the enumerator in
	// lower case (PERF_RECORD_MMAP: struct perf_record_mmap), when there is one.
	Type     string
	TypeEnum string
	// Filter keeps records whose member FilterMember equals FilterValue
	// (a number, or an enumerator of TypeEnum).
	FilterMember, FilterValue string
}

// ParseClass parses a -C argument with pahole's --prettify arguments.
func ParseClass(s string) (Class, error) {
	c := Class{Name: s}
	open := strings.IndexByte(s, '(')
	if open < 0 {
		return c, nil
	}
	if !strings.HasSuffix(s, ")") {
		return c, fmt.Errorf("-C %q: arguments must end with ')'", s)
	}
	c.Name = s[:open]
	for _, a := range strings.Split(s[open+1:len(s)-1], ",") {
		k, v, hasV := strings.Cut(strings.TrimSpace(a), "=")
		switch k {
		case "sizeof":
			c.Sizeof = "size"
			if hasV {
				c.Sizeof = v
			}
		case "type":
			c.Type = "type"
			if hasV {
				c.Type = v
			}
		case "type_enum":
			c.TypeEnum = v
		case "filter":
			m, val, ok := strings.Cut(v, "==")
			if !ok {
				return c, fmt.Errorf("-C %q: filter=%s: only MEMBER==VALUE is supported", s, v)
			}
			c.FilterMember, c.FilterValue = m, val
		case "":
		default:
			return c, fmt.Errorf("-C %q: unknown argument %q (want sizeof, type, type_enum, filter)", s, k)
		}
	}
	if c.Type != "" && c.TypeEnum == "" {
		return c, fmt.Errorf("-C %q: type= needs type_enum=", s)
	}
	return c, nil
}

// Stream says which records of an input to print, with pahole's
// --prettify options.
type Stream struct {
	Type  types.Type // the record type (-C), nil with only a header
	Class Class
	// Header is printed first when there is no Type; otherwise its
	// fields are what $header.FIELD expressions in SeekBytes, SizeBytes
	// and Range read.
	Header               types.Type
	Skip, Count          int64 // records skipped, then at most Count printed (0: all)
	SeekBytes, SizeBytes string
	// Range names a header member with offset and size members: the
	// records are the bytes it spans.
	Range string
	// Lookup finds types by name, for type_enum and its record types.
	Lookup func(name string) types.Type
	JSON   bool
}

// Prettify prints the records of data that s selects.
func Prettify(w io.Writer, data []byte, s *Stream, o *Options) error {
	var hdr *Node
	start, end := int64(0), int64(len(data))
	if s.Header != nil {
		hdr = Decode(s.Header, data, o)
		if s.Type == nil {
			return emit(w, s.Header, hdr, s.JSON, o)
		}
		hs, err := types.Sizeof(s.Header)
		if err != nil {
			return err
		}
		start = hs
	} else if s.Type == nil {
		return errors.New("--prettify needs a type: -C TYPE or --header TYPE")
	}
	seek, size := s.SeekBytes, s.SizeBytes
	if s.Range != "" {
		if seek != "" || size != "" {
			return errors.New("--range replaces --seek_bytes and --size_bytes: give one or the others")
		}
		seek, size = "$header."+s.Range+".offset", "$header."+s.Range+".size"
	}
	if seek != "" {
		v, err := headerValue(seek, hdr)
		if err != nil {
			return fmt.Errorf("--seek_bytes %s: %v", seek, err)
		}
		start = int64(v)
	}
	if size != "" {
		v, err := headerValue(size, hdr)
		if err != nil {
			return fmt.Errorf("--size_bytes %s: %v", size, err)
		}
		end = min(end, start+int64(v))
	}
	if start > int64(len(data)) {
		return fmt.Errorf("--seek_bytes %d: past the input's %d bytes", start, len(data))
	}
	return s.records(w, data[start:end], o)
}

func emit(w io.Writer, t types.Type, n *Node, asJSON bool, o *Options) error {
	if !asJSON {
		return Write(w, t, n, o)
	}
	b, err := json.Marshal(JSONValue(n))
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

func (s *Stream) records(w io.Writer, data []byte, o *Options) error {
	base, err := types.Sizeof(s.Type)
	if err != nil {
		return err
	}
	if base <= 0 {
		return fmt.Errorf("%s: a record type needs a size", s.Class.Name)
	}
	enum, err := s.enum()
	if err != nil {
		return err
	}
	var skipped, printed int64
	for off := int64(0); off+base <= int64(len(data)); {
		rec := data[off:]
		n := Decode(s.Type, rec, o)
		size := base
		if s.Class.Sizeof != "" {
			v, ok := uintField(n, s.Class.Sizeof)
			if !ok || v < uint64(base) {
				return fmt.Errorf("record at byte %d: member %s holds no size of at least %d bytes", off, s.Class.Sizeof, base)
			}
			size = int64(v)
		}
		if off+size > int64(len(data)) {
			return fmt.Errorf("record at byte %d: %d bytes, but the input ends %d bytes in", off, size, int64(len(data))-off)
		}
		off += size
		if !s.keep(n, enum) {
			continue
		}
		if skipped < s.Skip {
			skipped++
			continue
		}
		t := s.recordType(n, enum)
		if t != s.Type {
			n = Decode(t, rec[:size], o)
		}
		s.enumify(n, enum)
		if err := emit(w, t, n, s.JSON, o); err != nil {
			return err
		}
		if printed++; s.Count > 0 && printed >= s.Count {
			break
		}
	}
	return nil
}

func (s *Stream) enum() (*types.Enum, error) {
	if s.Class.TypeEnum == "" {
		return nil, nil
	}
	if s.Lookup != nil {
		if e, ok := types.Resolve(s.Lookup(s.Class.TypeEnum)).(*types.Enum); ok {
			return e, nil
		}
	}
	return nil, fmt.Errorf("type_enum=%s: no such enum", s.Class.TypeEnum)
}

// keep applies the filter.
func (s *Stream) keep(n *Node, enum *types.Enum) bool {
	if s.Class.FilterMember == "" {
		return true
	}
	f := field(n, s.Class.FilterMember)
	if f == nil {
		return false
	}
	if f.Text == s.Class.FilterValue {
		return true
	}
	want, err := strconv.ParseInt(s.Class.FilterValue, 0, 64)
	if err != nil && enum != nil {
		for _, e := range enum.Values {
			if e.Name == s.Class.FilterValue {
				want, err = e.Value, nil
			}
		}
	}
	got, ok := uintField(n, s.Class.FilterMember)
	return err == nil && ok && int64(got) == want
}

// recordType is the type the record's type member selects.
func (s *Stream) recordType(n *Node, enum *types.Enum) types.Type {
	if enum == nil || s.Class.Type == "" || s.Lookup == nil {
		return s.Type
	}
	v, ok := uintField(n, s.Class.Type)
	if !ok {
		return s.Type
	}
	for _, e := range enum.Values {
		if uint64(e.Value) == v {
			if t := s.Lookup(strings.ToLower(e.Name)); t != nil {
				return t
			}
		}
	}
	return s.Type
}

// field finds a member by a dotted path.
func field(n *Node, path string) *Node {
	for _, part := range strings.Split(path, ".") {
		if n == nil || n.Kind != Record {
			return nil
		}
		var next *Node
		for _, f := range n.Fields {
			if f.Name == part {
				next = f.Value
			}
		}
		n = next
	}
	return n
}

// uintField is a member's value as an unsigned number (enumerators by
// their value, through the JSON form's number).
func uintField(n *Node, path string) (uint64, bool) {
	f := field(n, path)
	if f == nil || f.Kind != Scalar || f.Unknown != "" {
		return 0, false
	}
	switch v := f.JSON.(type) {
	case uint64:
		return v, true
	case int64:
		return uint64(v), v >= 0
	}
	if v, err := strconv.ParseUint(f.Text, 0, 64); err == nil {
		return v, true
	}
	return 0, false
}

// headerValue evaluates a number or $header.FIELD[.FIELD...].
func headerValue(expr string, hdr *Node) (uint64, error) {
	path, ok := strings.CutPrefix(expr, "$header.")
	if !ok {
		return strconv.ParseUint(expr, 0, 64)
	}
	if hdr == nil {
		return 0, errors.New("$header needs --header TYPE")
	}
	v, ok := uintField(hdr, path)
	if !ok {
		return 0, fmt.Errorf("the header has no numeric member %s", path)
	}
	return v, nil
}

// enumify prints the type member as its enumerator, as pahole does: in the
// record, or in its first member when that is the header (struct
// perf_record_mmap { struct perf_event_header header; ... }).
func (s *Stream) enumify(n *Node, enum *types.Enum) {
	if enum == nil || s.Class.Type == "" {
		return
	}
	f := field(n, s.Class.Type)
	if f == nil && len(n.Fields) > 0 {
		f = field(n.Fields[0].Value, s.Class.Type)
	}
	v, ok := uint64(0), false
	if f != nil {
		v, ok = f.JSON.(uint64)
	}
	if !ok {
		return
	}
	for _, e := range enum.Values {
		if uint64(e.Value) == v {
			f.Text, f.JSON = e.Name, e.Name
			return
		}
	}
}
