package btf

import (
	"encoding/binary"
	"errors"
)

// BTF kinds (include/uapi/linux/btf.h) that index needs to know.
const (
	kindInt       = 1
	kindArray     = 3
	kindStruct    = 4
	kindUnion     = 5
	kindEnum      = 6
	kindTypedef   = 8
	kindFuncProto = 13
	kindVar       = 14
	kindDatasec   = 15
	kindDeclTag   = 17
	kindEnum64    = 19
)

// namedComposites lists the IDs of the named structs, unions, enums and
// typedefs of raw, non-split BTF by walking the type records' headers
// only. Decoding just those (and what they refer to) skips the functions
// and their prototypes, more than half of a kernel's types. cilium/ebpf
// decodes everything; this is an index into its input, and any doubt about
// the input (a layout this walk does not know) returns an error so that the
// caller decodes every type instead.
func namedComposites(raw []byte) ([]uint32, error) {
	ids, _, err := namedCompositeNames(raw)
	return ids, err
}

// namedCompositeNames is namedComposites with each type's name offset in
// the string section.
func namedCompositeNames(raw []byte) (ids, nameOffs []uint32, err error) {
	if len(raw) < 24 {
		return nil, nil, errShort
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if raw[0] == 0xeb && raw[1] == 0x9f {
		bo = binary.BigEndian
	}
	hdrLen := bo.Uint32(raw[4:])
	typeOff, typeLen := bo.Uint32(raw[8:]), bo.Uint32(raw[12:])
	start := uint64(hdrLen) + uint64(typeOff)
	end := start + uint64(typeLen)
	if hdrLen < 24 || end > uint64(len(raw)) {
		return nil, nil, errShort
	}
	types := raw[start:end]
	for id, off := uint32(1), 0; off < len(types); id++ {
		if off+12 > len(types) {
			return nil, nil, errShort
		}
		nameOff := bo.Uint32(types[off:])
		info := bo.Uint32(types[off+4:])
		kind, vlen := (info>>24)&0x1f, int(info&0xffff)
		n, err := dataLen(kind, vlen)
		if err != nil {
			return nil, nil, err
		}
		off += 12 + n
		switch kind {
		case kindStruct, kindUnion, kindEnum, kindEnum64, kindTypedef:
			if nameOff != 0 {
				ids = append(ids, id)
				nameOffs = append(nameOffs, nameOff)
			}
		}
	}
	return ids, nameOffs, nil
}

// dataLen is the length of what follows a type record's 12-byte header.
func dataLen(kind uint32, vlen int) (int, error) {
	switch kind {
	case kindInt, kindVar, kindDeclTag:
		return 4, nil
	case kindArray:
		return 12, nil
	case kindStruct, kindUnion, kindDatasec, kindEnum64:
		return 12 * vlen, nil
	case kindEnum, kindFuncProto:
		return 8 * vlen, nil
	case kindTypedef, 2, 7, 9, 10, 11, 12, 16, 18: // TYPEDEF PTR FWD VOLATILE CONST RESTRICT FUNC FLOAT TYPE_TAG
		return 0, nil
	}
	return 0, errUnknownKind
}

var (
	errShort       = errors.New("type section runs past the data")
	errUnknownKind = errors.New("unknown kind")
)
