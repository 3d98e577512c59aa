// Package jsonx writes JSON as people read it: probe definitions ("c->n"),
// Rust and C++ types ("Vec<u8>") and shell commands ("a && b") keep their
// characters, where encoding/json's Marshal would escape <, > and & for
// HTML.
package jsonx

import (
	"bytes"
	"encoding/json"
)

// Marshal is json.Marshal without HTML escaping.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
