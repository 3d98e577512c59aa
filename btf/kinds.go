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
	sec, err := sectionsOf(raw)
	if err != nil {
		return nil, nil, err
	}
	err = sec.eachRecord(func(id uint32, _ int, nameOff, kind uint32, _ int) {
		switch kind {
		case kindStruct, kindUnion, kindEnum, kindEnum64, kindTypedef:
			if nameOff != 0 {
				ids = append(ids, id)
				nameOffs = append(nameOffs, nameOff)
			}
		}
	})
	if err != nil {
		return nil, nil, err
	}
	return ids, nameOffs, nil
}

// sections are raw BTF's byte order, type records and strings, as its
// header places them.
type sections struct {
	bo         binary.ByteOrder
	recs, strs []byte
}

// sectionsOf reads raw BTF's header.
func sectionsOf(raw []byte) (sections, error) {
	if len(raw) < 24 {
		return sections{}, errShort
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if raw[0] == 0xeb && raw[1] == 0x9f {
		bo = binary.BigEndian
	}
	hdrLen := uint64(bo.Uint32(raw[4:]))
	typeOff, typeLen := uint64(bo.Uint32(raw[8:])), uint64(bo.Uint32(raw[12:]))
	strOff, strLen := uint64(bo.Uint32(raw[16:])), uint64(bo.Uint32(raw[20:]))
	if hdrLen < 24 || hdrLen+typeOff+typeLen > uint64(len(raw)) || hdrLen+strOff+strLen > uint64(len(raw)) {
		return sections{}, errShort
	}
	return sections{bo: bo, recs: raw[hdrLen+typeOff : hdrLen+typeOff+typeLen], strs: raw[hdrLen+strOff : hdrLen+strOff+strLen]}, nil
}

// eachRecord calls f with each type record's ID, offset in the type
// section, name offset, kind and vlen, in ID order, walking the records'
// headers only. A record that runs past the section, or of a kind this
// walk does not know, ends the walk with an error.
func (s sections) eachRecord(f func(id uint32, off int, nameOff, kind uint32, vlen int)) error {
	for id, off := uint32(1), 0; off < len(s.recs); id++ {
		if off+12 > len(s.recs) {
			return errShort
		}
		nameOff := s.bo.Uint32(s.recs[off:])
		info := s.bo.Uint32(s.recs[off+4:])
		kind, vlen := (info>>24)&0x1f, int(info&0xffff)
		n, err := dataLen(kind, vlen)
		if err != nil {
			return err
		}
		if off+12+n > len(s.recs) {
			return errShort
		}
		f(id, off, nameOff, kind, vlen)
		off += 12 + n
	}
	return nil
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
