package flame

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"math"
	"os/exec"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
)

// element is an XML element as testdata/dom.js reads it.
type element struct {
	Tag      string            `json:"tag"`
	Attrs    map[string]string `json:"attrs"`
	Text     string            `json:"text"`
	Children []*element        `json:"children"`
}

// parseTree reads an XML document into elements, dropping the <script>.
func parseTree(t *testing.T, doc []byte) (*element, string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	var stack []*element
	var root *element
	var script string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := &element{Tag: tok.Name.Local, Attrs: map[string]string{}, Children: []*element{}}
			for _, a := range tok.Attr {
				e.Attrs[a.Name.Local] = a.Value
			}
			if len(stack) == 0 {
				root = e
			} else {
				p := stack[len(stack)-1]
				p.Children = append(p.Children, e)
			}
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].Text += string(tok)
			}
		}
	}
	for i, c := range root.Children {
		if c.Tag == "script" {
			script = c.Text
			root.Children = append(root.Children[:i], root.Children[i+1:]...)
			break
		}
	}
	return root, script
}

type snapFrame struct {
	Name   string  `json:"name"`
	X      float64 `json:"x"`
	Width  float64 `json:"width"`
	Fill   string  `json:"fill"`
	Label  string  `json:"label"`
	LabelX float64 `json:"labelX"`
	Hidden bool    `json:"hidden"`
	Dim    bool    `json:"dim"`
}

type snapshot struct {
	Frames  []snapFrame `json:"frames"`
	Details string      `json:"details"`
	Matched string      `json:"matched"`
	Search  string      `json:"search"`
	Unzoom  string      `json:"unzoom"`
}

func (s *snapshot) frame(t *testing.T, name string) snapFrame {
	t.Helper()
	for _, f := range s.Frames {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no frame %q", name)
	return snapFrame{}
}

// TestScript runs the graph's script in node against a stand-in DOM:
// zoom, reset, hover, search.
func TestScript(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		testutil.Skipf(t, "node not installed, the flame graph's script is not run: %v", err)
	}
	svg, _, frames := render(t, small(), &SVGOptions{Width: 800})
	tree, script := parseTree(t, svg)
	snap := map[string]any{"do": "snapshot"}
	actions := []map[string]any{
		{"do": "click", "frame": "all"}, snap, // 0: laid out by the script, unzoomed
		{"do": "click", "frame": "main.outer"}, snap, // 1: zoomed
		{"do": "hover", "frame": "main.inner"}, snap, // 2
		{"do": "key", "key": "/", "answer": `main\.(inner|helper)`}, snap, // 3: search, zoomed
		{"do": "key", "key": "f", "ctrl": true, "answer": "("}, snap, // 4: a bad expression changes nothing
		{"do": "key", "key": "f", "ctrl": true, "answer": "SYSCALL|ksys"}, snap, // 5: nested matches once
		{"do": "key", "key": "Escape"}, snap, // 6: all reset
	}
	in, err := json.Marshal(map[string]any{"doc": tree, "script": script, "actions": actions})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "testdata/dom.js")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var res struct {
		Snapshots []snapshot
		Alerts    []string
		Prompts   []struct{ Msg, Def string }
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(res.Snapshots) != 7 {
		t.Fatalf("%d snapshots", len(res.Snapshots))
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 0.011 }

	// The script lays frames out and cuts labels as WriteSVG does.
	s := res.Snapshots[0]
	for i, f := range s.Frames {
		w := frames[i]
		if f.Name != w.name() || !near(f.X, w.Rect.X) || !near(f.Width, w.Rect.Width) || f.Label != w.Label || f.Hidden || f.Dim {
			t.Errorf("unzoomed, the script draws %+v; WriteSVG drew %+v", f, w)
		}
	}
	if s.Unzoom != "hidden" {
		t.Errorf("reset button %q when not zoomed", s.Unzoom)
	}

	// Zoomed into main.outer (samples 20 to 100): it and its callees fill
	// 780 px, its callers span it dimmed, the rest is hidden.
	s = res.Snapshots[1]
	for _, name := range []string{"main.outer", "main.inner"} {
		if f := s.frame(t, name); !near(f.X, 10) || !near(f.Width, 780) || f.Hidden || f.Dim || f.Label != name {
			t.Errorf("zoomed: %+v", f)
		}
	}
	if f := s.frame(t, "main.helper"); !near(f.X, 10+780*70.0/80) || !near(f.Width, 780*10.0/80) || f.Hidden {
		t.Errorf("zoomed: %+v", f)
	}
	for _, name := range []string{"all", "main.main"} {
		if f := s.frame(t, name); !f.Dim || f.Hidden || !near(f.Width, 780) {
			t.Errorf("zoomed, caller: %+v", f)
		}
	}
	for _, name := range []string{"main.other", "write", "ksys_write", cxxName} {
		if f := s.frame(t, name); !f.Hidden {
			t.Errorf("zoomed, %s is shown", name)
		}
	}
	if s.Unzoom != "visible" {
		t.Errorf("reset button %q when zoomed", s.Unzoom)
	}

	if d := res.Snapshots[2].Details; d != "main.inner (app, Go, 80 samples, 80.00%)" {
		t.Errorf("details %q", d)
	}

	s = res.Snapshots[3]
	if s.Matched != "Matched: 80.00% (80 of 100 samples)" || !strings.Contains(s.Search, `main\.(inner|helper)`) {
		t.Errorf("search: %q, %q", s.Matched, s.Search)
	}
	for i, f := range s.Frames {
		hit := f.Name == "main.inner" || f.Name == "main.helper"
		if (f.Fill != frames[i].Rect.Fill) != hit {
			t.Errorf("search: %s filled %s", f.Name, f.Fill)
		}
	}
	if !s.frame(t, "main.main").Dim {
		t.Error("searching undid the zoom")
	}

	if len(res.Alerts) != 1 || res.Snapshots[4].Matched != s.Matched {
		t.Errorf("a bad expression: alerts %q, matched %q", res.Alerts, res.Snapshots[4].Matched)
	}
	if res.Prompts[1].Def != `main\.(inner|helper)` {
		t.Errorf("the prompt does not offer the last search: %+v", res.Prompts)
	}
	if m := res.Snapshots[5].Matched; m != "Matched: 5.00% (5 of 100 samples)" {
		t.Errorf("nested matches: %q", m)
	}

	s = res.Snapshots[6]
	for i, f := range s.Frames {
		if f.Hidden || f.Dim || f.Fill != frames[i].Rect.Fill || !near(f.Width, frames[i].Rect.Width) {
			t.Errorf("after Escape: %+v", f)
		}
	}
	if s.Matched != "" || s.Search != "Search" || s.Unzoom != "hidden" {
		t.Errorf("after Escape: %+v", s)
	}
}
