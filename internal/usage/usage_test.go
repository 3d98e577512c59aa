package usage

import (
	"errors"
	"fmt"
	"testing"
)

func TestIs(t *testing.T) {
	base := errors.New("--format x: want c or text")
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{Wrap(base), true},
		{Errorf("%d flags", 2), true},
		{fmt.Errorf("run: %w", Wrap(base)), true},
		{base, false},
		{nil, false},
		{Wrap(nil), false},
	} {
		if got := Is(tc.err); got != tc.want {
			t.Errorf("Is(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
	if err := Wrap(base); err.Error() != base.Error() || !errors.Is(err, base) {
		t.Errorf("Wrap(%v) = %v: want the same message, wrapping it", base, err)
	}
}
