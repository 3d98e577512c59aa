package code_test

import (
	"os"
	"testing"

	"github.com/binscope/binscope/code"
)

func TestZZProf(t *testing.T) {
	p := os.Getenv("BIN")
	for i := 0; i < 3; i++ {
		m, err := code.Open(p, &code.Options{Params: os.Getenv("P") != ""})
		if err != nil {
			t.Fatal(err)
		}
		m.Close()
	}
}
