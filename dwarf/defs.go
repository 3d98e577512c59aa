package dwarf

// Definition is a struct, class or union defined in a compile unit.
type Definition struct {
	Name string // qualified as the type listing names it (ns::Widget)
	Unit string // the compile unit's DW_AT_name
}

// Definitions lists the named structs, classes and unions the file
// defines at the top of a unit or namespace, once for every compile unit
// that defines one (pahole's -T and -u count and name those), in
// .debug_info order. Corrupt DWARF gives an error naming the file, the
// section and the offset.
func (f *File) Definitions() (defs []Definition, err error) {
	c, err := f.typeConverter()
	if err != nil {
		return nil, err
	}
	for _, n := range c.ix.named {
		switch n.tag {
		case TagStructType, TagClassType, TagUnionType:
		default:
			continue
		}
		e, err := n.entry()
		if err != nil {
			return nil, err
		}
		if e.Declaration() {
			continue
		}
		d := Definition{Name: c.qualify(n, e.Name())}
		if int(n.unit) >= 0 && int(n.unit) < len(c.ix.units) {
			d.Unit = c.ix.units[n.unit].name
		}
		defs = append(defs, d)
	}
	return defs, nil
}
