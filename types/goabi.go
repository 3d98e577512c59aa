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
