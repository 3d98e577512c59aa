package probe

import (
	"regexp"
	"strings"
	"testing"

	"github.com/binscope/binscope/internal/testutil"
	"github.com/binscope/binscope/spec"
)

// TestFloatHint: client_golang's (*gauge).Set receives its float64 in X0,
// which a uprobe cannot read; the resolver says so and suggests a return
// probe on the field the method stores it in, and that suggestion
// resolves to a readable argument.
func TestFloatHint(t *testing.T) {
	b := testutil.Fixture(t, "go-prom")
	r := openResolver(t, b.Path)
	d, err := Parse("github.com/prometheus/client_golang/prometheus.(*gauge).Set val")
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Resolve(d)
	if err != nil {
		t.Fatal(err)
	}
	why := p.Sites[0].Args[0].Unavailable
	m := regexp.MustCompile(`'([^']+)'`).FindStringSubmatch(why)
	if !strings.Contains(why, "vector register") || m == nil {
		t.Fatalf("val: %q: want a vector register and a suggestion", why)
	}
	d2, err := Parse(m[1])
	if err != nil {
		t.Fatalf("the suggestion %q does not parse: %v", m[1], err)
	}
	p2, err := r.Resolve(d2)
	if err != nil {
		t.Fatalf("the suggestion %q does not resolve: %v", m[1], err)
	}
	returns := 0
	for _, s := range p2.Sites {
		if s.Kind != spec.SiteReturn {
			continue
		}
		returns++
		if a := s.Args[0]; a.Unavailable != "" || a.Type != "f64" {
			t.Errorf("the suggestion %q at %#x: %+v", m[1], s.Addr, a)
		}
	}
	if returns == 0 {
		t.Errorf("the suggestion %q has no return sites", m[1])
	}
}
