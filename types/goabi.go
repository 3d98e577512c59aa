package types

// ScalarParts calls take for each scalar part of t, in memory order, as
// Go's register ABI assigns a value to registers; it stops and returns
// false when take does, or for an array of more than one element (which
// the ABI passes on the stack). A cycle (see Walk) gives false too.
func ScalarParts(t Type, take func(size int64, float bool) bool) bool {
	var w Walk
	return scalarParts(t, &w, take)
}

func scalarParts(t Type, w *Walk, take func(size int64, float bool) bool) bool {
	if !w.Enter(t) {
		return false
	}
	defer w.Leave()
	switch v := Resolve(t).(type) {
	case *Base:
		switch v.Encoding {
		case Float:
			return take(v.ByteSize, true)
		case Complex:
			return take(v.ByteSize/2, true) && take(v.ByteSize/2, true)
		}
		if v.ByteSize == 0 {
			return true
		}
		return take(v.ByteSize, false)
	case *Pointer, *FuncProto:
		return take(8, false)
	case *Enum:
		return take(v.ByteSize, false)
	case *Struct:
		for _, m := range v.Members {
			if !scalarParts(m.Type, w, take) {
				return false
			}
		}
		return true
	case *Array:
		switch v.Count {
		case 0:
			return true
		case 1:
			return scalarParts(v.Elem, w, take)
		}
		return false
	}
	return false
}

// GoStackOffsets is where Go's stack calling convention (ABI0: every Go
// function before the register ABI, see arch.GoRegABI) puts each of
// params, a function's receiver, arguments and results in declaration
// order (Result marks the results): the byte offset of each from the
// first word of the argument area, which on x86-64 lies just above the
// return address. The compiler lays that area out as a struct
// (cmd/compile's widstruct): the receiver and the arguments in order, each
// aligned to its type; the results after them, from the next multiple of
// ptrSize. ok is false when a parameter's size is not known.
//
// Worked example: func (t *T) f(b byte, n int64) (ok bool, err error) has
// t at 0, b at 8, n at 16, ok at 24 and err at 32; func g(b byte) (c
// byte) has b at 0 and c at 8.
func GoStackOffsets(params []Param, ptrSize int64) (offs []int64, ok bool) {
	offs = make([]int64, len(params))
	var o int64
	results := false
	for i, p := range params {
		if p.Result && !results {
			results = true
			o = (o + ptrSize - 1) / ptrSize * ptrSize
		}
		size, err := Sizeof(p.Type)
		if err != nil {
			return nil, false
		}
		if a := Alignof(p.Type); a > 1 {
			o = (o + a - 1) / a * a
		}
		offs[i] = o
		o += size
	}
	return offs, true
}
