package btf

// enum32 rewrites each ENUM64 record of raw BTF (as cilium/ebpf's
// marshalling writes it: header, types, then strings) as the ENUM record
// pahole writes without the enum64 feature: the same size and sign, each
// value cut to its low 32 bits.
func enum32(raw []byte) ([]byte, error) {
	sec, err := sectionsOf(raw)
	if err != nil {
		return nil, err
	}
	hdrLen := int(sec.bo.Uint32(raw[4:]))
	recs := make([]byte, 0, len(sec.recs))
	last := 0
	err = sec.eachRecord(func(_ uint32, off int, _, kind uint32, vlen int) {
		if kind != kindEnum64 {
			return
		}
		recs = append(recs, sec.recs[last:off]...)
		hdr := append([]byte(nil), sec.recs[off:off+12]...)
		info := sec.bo.Uint32(hdr[4:])
		sec.bo.PutUint32(hdr[4:], info&^(0x1f<<24)|kindEnum<<24)
		recs = append(recs, hdr...)
		for i := range vlen {
			v := sec.recs[off+12+12*i:]
			var val [8]byte
			sec.bo.PutUint32(val[:], sec.bo.Uint32(v))      // name
			sec.bo.PutUint32(val[4:], sec.bo.Uint32(v[4:])) // the low 32 bits
			recs = append(recs, val[:]...)
		}
		last = off + 12 + 12*vlen
	})
	if err != nil {
		return nil, err
	}
	recs = append(recs, sec.recs[last:]...)
	out := append([]byte(nil), raw[:hdrLen]...)
	sec.bo.PutUint32(out[8:], 0)                  // type_off
	sec.bo.PutUint32(out[12:], uint32(len(recs))) // type_len
	sec.bo.PutUint32(out[16:], uint32(len(recs))) // str_off
	sec.bo.PutUint32(out[20:], uint32(len(sec.strs)))
	out = append(append(out, recs...), sec.strs...)
	return out, nil
}
