package jsonx

import (
	"encoding/json"
	"testing"
)

// Marshal keeps <, > and & as they are, and the result decodes to the value.
func TestMarshal(t *testing.T) {
	in := map[string]string{"probe": "add v a->n", "type": "Vec<u8>", "cmd": "a && b"}
	b, err := Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"cmd":"a && b","probe":"add v a->n","type":"Vec<u8>"}`
	if string(b) != want {
		t.Errorf("Marshal = %s, want %s", b, want)
	}
	var back map[string]string
	if err := json.Unmarshal(b, &back); err != nil || back["probe"] != in["probe"] {
		t.Errorf("round trip: %v %v", back, err)
	}
}
