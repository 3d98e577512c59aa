package spec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/binscope/binscope/internal/jsonx"
	"github.com/binscope/binscope/types"
)

// Event is one hit of a probe, decoded from the ring buffer.
type Event struct {
	Probe  int
	Site   int
	Pid    uint32
	Tid    uint32
	TimeNS uint64
	Args   []Value
	// Stack is the user stack, innermost first, when the session takes
	// stacks.
	Stack []uint64
}

// addText records the text a struct argument's part read.
func (v *Value) addText(f Fetch, slot []byte) {
	if v.Texts == nil {
		v.Texts = map[int64]string{}
	}
	data := slot[8 : 8+StringMax]
	switch f.Type {
	case "string":
		v.Texts[f.Part.Offset] = string(data[:min(binary.LittleEndian.Uint64(slot), StringMax)])
	case "cstring":
		if i := bytes.IndexByte(data, 0); i >= 0 {
			data = data[:i+1]
		}
		v.Texts[f.Part.Offset] = string(data)
	}
}

// Value is one argument's value: Text for strings and bytes, Num (its
// bits) for numbers; OK is false when it could not be read at this site.
type Value struct {
	Name string
	Type string
	OK   bool
	Num  uint64
	Text string
	// Truncated is set when a string was longer than StringMax bytes.
	Truncated bool
	// Data is an interface's data word (Num is its type word), and Text
	// its dynamic type's name when the spec knows the itab.
	Data uint64
	// Raw, Layout and Texts are a "struct" argument's bytes, its type
	// (nil when the spec came from a file) and the text its members point
	// to, by member offset.
	Raw    []byte
	Layout types.Type
	Texts  map[int64]string
}

// Decode reads a record written by the programs of s.
func (s *Spec) Decode(rec []byte) (*Event, error) {
	if len(rec) < EventHeader {
		return nil, fmt.Errorf("record of %d bytes", len(rec))
	}
	le := binary.LittleEndian
	e := &Event{Probe: int(le.Uint32(rec[EventProbe:])), Site: int(le.Uint32(rec[EventSite:]))}
	pt := le.Uint64(rec[EventPidTgid:])
	e.Pid, e.Tid = uint32(pt>>32), uint32(pt)
	e.TimeNS = le.Uint64(rec[EventTime:])
	ok := le.Uint64(rec[EventOK:])
	if e.Probe >= len(s.Probes) || e.Site >= len(s.Probes[e.Probe].Sites) {
		return nil, fmt.Errorf("record for probe %d site %d, which the spec does not have", e.Probe, e.Site)
	}
	site := s.Probes[e.Probe].Sites[e.Site]
	if len(rec) < EventHeader+ArgSlot*len(site.Args) {
		return nil, fmt.Errorf("record of %d bytes for %d arguments", len(rec), len(site.Args))
	}
	whole := map[int]int{} // a struct argument's index in site.Args -> in e.Args
	for k, f := range site.Args {
		slot := rec[EventHeader+ArgSlot*k:]
		if f.Part != nil {
			i, found := whole[f.Part.Of]
			if found && f.Part.Offset >= 0 && ok&(1<<k) != 0 {
				e.Args[i].addText(f, slot)
			}
			continue
		}
		v := Value{Name: f.Name, Type: f.Type, OK: ok&(1<<k) != 0 && f.Unavailable == ""}
		v.Num = le.Uint64(slot)
		data := slot[8 : 8+StringMax]
		switch f.Type {
		case "string", "bytes":
			n := min(v.Num, StringMax)
			v.Text, v.Truncated = string(data[:n]), v.Num > StringMax
		case "iface":
			v.Data = le.Uint64(data)
			for _, d := range f.Dynamic {
				if d.Itab == v.Num {
					v.Text = d.Name
				}
			}
		case "cstring":
			if i := bytes.IndexByte(data, 0); i >= 0 {
				data = data[:i]
			}
			v.Text = string(data)
		case "chars": // the array's bytes, up to its first NUL
			data = data[:min(v.Num, StringMax)]
			if i := bytes.IndexByte(data, 0); i >= 0 {
				data = data[:i]
			}
			v.Text = string(data)
		case "struct":
			whole[k] = len(e.Args)
			structValue(&v, f, rec, EventHeader+ArgSlot*k)
		default:
			v.Num = extend(v.Num, f.Type, f.Size)
			if f.Bits != nil {
				v.Num = f.Bits.Extract(v.Num, f.Type[0] == 's')
			}
		}
		e.Args = append(e.Args, v)
	}
	for b := rec[EventHeader+ArgSlot*len(site.Args):]; len(b) >= 8; b = b[8:] {
		ip := le.Uint64(b)
		if ip == 0 {
			break
		}
		e.Stack = append(e.Stack, ip)
	}
	return e, nil
}

// extend truncates a register-wide value to the fetch's size and
// sign-extends signed types.
func extend(v uint64, typ string, size int64) uint64 {
	if size <= 0 || size >= 8 {
		return v
	}
	bits := uint(size * 8)
	v &= 1<<bits - 1
	if typ[0] == 's' && v&(1<<(bits-1)) != 0 {
		v |= ^uint64(0) << bits
	}
	return v
}

// String spells a value as its type says: decimal, hex, a float, quoted
// text; "?" when it could not be read.
func (v Value) String() string {
	if !v.OK {
		return "?"
	}
	switch v.Type {
	case "string", "cstring", "chars":
		s := strconv.Quote(v.Text)
		if v.Truncated {
			s += "..."
		}
		return s
	case "bytes":
		return fmt.Sprintf("%x", v.Text)
	case "struct":
		text, _ := v.structText(true)
		return text
	case "iface":
		switch {
		case v.Num == 0:
			return "nil"
		case v.Text != "":
			return fmt.Sprintf("%s(%#x)", v.Text, v.Data)
		}
		return fmt.Sprintf("(%#x,%#x)", v.Num, v.Data)
	case "f64":
		return strconv.FormatFloat(math.Float64frombits(v.Num), 'g', -1, 64)
	case "f32":
		return strconv.FormatFloat(float64(math.Float32frombits(uint32(v.Num))), 'g', -1, 32)
	}
	switch v.Type[0] {
	case 's':
		return strconv.FormatInt(int64(v.Num), 10)
	case 'x':
		return fmt.Sprintf("%#x", v.Num)
	}
	return strconv.FormatUint(v.Num, 10)
}

// JSONValue is the value as JSON holds it: a number, a string, or null.
func (v Value) JSONValue() any {
	if !v.OK {
		return nil
	}
	switch v.Type {
	case "string", "cstring", "chars":
		return v.Text
	case "bytes", "iface":
		return v.String()
	case "struct":
		_, j := v.structText(true)
		return j
	case "f64", "f32":
		f, _ := strconv.ParseFloat(v.String(), 64)
		return f
	}
	if v.Type[0] == 's' {
		return int64(v.Num)
	}
	if v.Type[0] == 'x' {
		return v.String()
	}
	return v.Num
}

// Line is the event as one text line: "PID/TID PROBE site=KIND name=value...".
func (s *Spec) Line(e *Event) string {
	p := s.Probes[e.Probe]
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d %s site=%s", e.Pid, e.Tid, p.Function, p.Sites[e.Site].Kind)
	for _, v := range e.Args {
		b.WriteString(" " + v.Name + "=" + v.String())
	}
	return b.String()
}

// JSON is the event as one JSON line.
func (s *Spec) JSON(e *Event) ([]byte, error) {
	p := s.Probes[e.Probe]
	args := map[string]any{}
	for _, v := range e.Args {
		args[v.Name] = v.JSONValue()
	}
	return jsonx.Marshal(struct {
		Probe  string         `json:"probe"`
		Site   string         `json:"site"`
		Addr   string         `json:"addr"`
		Pid    uint32         `json:"pid"`
		Tid    uint32         `json:"tid"`
		TimeNS uint64         `json:"time_ns"`
		Args   map[string]any `json:"args"`
	}{p.Def, p.Sites[e.Site].Kind, fmt.Sprintf("%#x", p.Sites[e.Site].Addr), e.Pid, e.Tid, e.TimeNS, args})
}
