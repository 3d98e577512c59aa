package dwarf

// index indexes the file's types (see indexWith) in one pass over
// .debug_info.
func (f *File) index() (*index, error) { return f.indexAll(false, false) }

// indexAll is index, or with outlined an outline of the file (see
// File.outline; with names, the units of each name).
func (f *File) indexAll(outlined, names bool) (*index, error) {
	return f.buildIndex(f.dieEntries(typeWalk), outlined, names)
}
