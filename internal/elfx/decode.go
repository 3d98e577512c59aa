package elfx

import (
	"errors"
	"fmt"
)

// DecodeError is a record of an ELF file that cannot be decoded, as
// debug/dwarf's DecodeError reports one, with the file: File names the
// file, Section the section (".debug_info", ".debug_line", ...; "" for the
// ELF headers) and Offset the record's offset in bytes from the section's
// start (NoOffset when unknown). Err says what is wrong.
type DecodeError struct {
	File    string
	Section string
	Offset  uint64
	Err     error
}

// NoOffset is DecodeError.Offset when the offset is unknown.
const NoOffset = ^uint64(0)

func (e *DecodeError) Error() string {
	where := e.File
	if e.Section != "" {
		where += ": section " + e.Section
	}
	if e.Offset != NoOffset {
		where += fmt.Sprintf(" at offset %#x", e.Offset)
	}
	return fmt.Sprintf("%s: %v (the file is damaged or of a form not read here: rebuild it, "+
		"or reinstall the package it or its debug file came from)", where, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Decode wraps err, met at offset off of section in file, as a
// *DecodeError; when err holds one already, that one (which knows better
// where the fault lies).
func Decode(file, section string, off uint64, err error) error {
	var de *DecodeError
	if errors.As(err, &de) {
		return de
	}
	return &DecodeError{File: file, Section: section, Offset: off, Err: err}
}

// Guard runs fn, which calls debug/elf or debug/dwarf on the section of
// file (a library that can panic on corrupt input), and turns such a panic
// into a *DecodeError (see Catch).
func Guard(file, section string, fn func() error) (err error) {
	var none struct{}
	defer Catch(file, section, "", &none, &err)
	return fn()
}

// Catch, deferred where a library that can panic on corrupt input runs
// (debug/elf, debug/dwarf, debug/gosym, cilium/ebpf's btf), turns such a
// panic into a *DecodeError of section in file in *err, saying "corrupt
// WHAT" when what is not "", and sets *result to its zero value. With
// Guard it is the project's one boundary for those libraries' panics: the
// readers above return their errors as values.
func Catch[T any](file, section, what string, result *T, err *error) {
	p := recover()
	if p == nil {
		return
	}
	var zero T
	*result = zero
	e := fmt.Errorf("%v", p)
	if what != "" {
		e = fmt.Errorf("corrupt %s: %v", what, p)
	}
	*err = &DecodeError{File: file, Section: section, Offset: NoOffset, Err: e}
}
