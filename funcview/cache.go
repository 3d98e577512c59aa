package funcview

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/binscope/binscope/dwarf"
	"github.com/binscope/binscope/internal/cache"
	"github.com/binscope/binscope/internal/elfx"
	"github.com/binscope/binscope/types"
)

// gofunct keeps its listings (every function's name, and with -P or
// --locations every prototype line) in the index cache, keyed by the binary: a second run on
// the same binary prints them without reading its DWARF. Only the plain
// listings use it (names, prototypes, sizes, with or without -E: no -f,
// -c, -H, -G), and only for files with DWARF. An entry's kind is "names",
// "protos" (-P) or "locs" (--locations).

// listVersion is the format version of gofunct's cache entries: bump it
// when what they hold changes.
const listVersion = 3

// listRow is one function as the plain listings print it.
type listRow struct {
	name       string
	external   bool
	symbolOnly bool
	entry      bool // has out-of-line code (LowPC != 0)
	size       uint64
	proto      string // the -P or --locations line; only in "protos" and "locs" entries
	// A -P line read from an entry is pre, the name and suf when split
	// (the entry holds the name once).
	pre, suf string
	split    bool
}

// ListCache is the cache entry a plain listing of one file reads or
// writes; nil when the listing or the file does not use the cache.
type ListCache struct {
	c     *cache.Cache
	kind  string // "names", "protos" or "locs"
	key   string
	ident func() (string, bool)
}

// cached reports whether l is a plain listing, the only ones the cache
// serves.
func (l *Listing) cached() bool {
	return len(l.Names) == 0 && l.Class == "" && !l.CCInlined && !l.CCUninlined &&
		(l.Show == ShowNames || l.Show.protos() || l.Show == ShowSizes)
}

// OpenListCache finds the entry for path's listing l, or returns nil: l
// is not a plain listing, the cache is off, or the file has no DWARF (a
// stripped Go binary's listing is quick, and -P on it may need a
// reference build). A file with split DWARF gets one that holds no entry
// and stores none. log, when not nil, hears whether the cache served and
// why an entry was not used.
func OpenListCache(path string, l *Listing, log func(string)) *ListCache {
	if !l.cached() {
		return nil
	}
	c := cache.Open(log)
	if c == nil {
		return nil
	}
	// A split file's entry is never written (store asks Split), and the
	// key changes with the file: an entry found is a file's whose DWARF
	// is not split. Asking Split here too cost a warm run the inflation
	// of .debug_info's first deflate block (glibc's debug file: 0.5 ms
	// of a warm gofunct --locations' 8, perf record of 150 runs).
	ident := func() (string, bool) { return fileIdentity(path, true) }
	id, ok := fileIdentity(path, false)
	if !ok {
		return nil
	}
	kind := "names"
	switch l.Show {
	case ShowPrototypes:
		kind = "protos"
	case ShowLocations:
		kind = "locs"
	}
	return &ListCache{c: c, kind: kind, key: cache.Key("gofunct", cache.Self(), id), ident: ident}
}

// fileIdentity is cache.FileKey of path and the file its DWARF is in;
// false when it has no DWARF or cannot be read, or, asked (unsplit), when
// that DWARF is split (its .dwo files are not part of the key).
func fileIdentity(path string, unsplit bool) (string, bool) {
	ef, err := elfx.Open(path)
	if err != nil {
		return "", false
	}
	defer ef.Close()
	debug := ef
	if !ef.HasDWARF() {
		if debug, _ = ef.FindDebugFile(); debug == nil {
			return "", false
		}
		defer debug.Close()
	}
	if unsplit && dwarf.Split(debug) {
		return "", false
	}
	id, err := cache.FileKey(ef, debug)
	return id, err == nil
}

// load returns the rows of the entry: a "names" listing may use a
// "protos" or "locs" entry, which hold the names too.
func (lc *ListCache) load() ([]listRow, bool) {
	kinds := []string{lc.kind}
	if lc.kind == "names" {
		kinds = append(kinds, "protos", "locs")
	}
	for _, k := range kinds {
		data, ok := lc.c.Get(k, listVersion, lc.key)
		if !ok {
			continue
		}
		rows, err := decodeRows(data, k != "names")
		if err != nil {
			if lc.c.Log != nil {
				lc.c.Log(fmt.Sprintf("index cache: %s entry %s: %v; ignored, reading the binary", k, lc.key[:16], err))
			}
			continue
		}
		if lc.c.Log != nil {
			lc.c.Log("listing from the index cache: " + lc.c.Path(k, lc.key))
		}
		return rows, true
	}
	return nil, false
}

// StoreWrite writes the rows of fns to the entry, unless the file changed
// while it was read, and prints l from them, exactly as List prints it:
// each row (a prototype is most of the cost) is made once.
func (lc *ListCache) StoreWrite(w io.Writer, fns []*types.Func, l *Listing) {
	rows := make([]listRow, len(fns))
	for i, fn := range fns {
		rows[i] = listRow{name: fn.Name, external: fn.External, symbolOnly: fn.SymbolOnly, entry: fn.LowPC != 0, size: fn.Size}
	}
	protos := lc.kind != "names"
	if protos {
		for i := range rows {
			rows[i].proto = l.Show.line(fns[i])
		}
	}
	writeRows(w, rows, l)
	lc.store(rows, protos)
}

// store writes the rows to the entry, unless the file changed while it
// was read.
func (lc *ListCache) store(rows []listRow, protos bool) {
	if id, ok := lc.ident(); !ok || cache.Key("gofunct", cache.Self(), id) != lc.key {
		return
	}
	b := binary.AppendUvarint(nil, uint64(len(rows)))
	lc.c.Put(lc.kind, listVersion, lc.key, appendRows(b, rows, protos))
}

// Write prints l from the cache entry, exactly as List prints it from the
// model of code of a file with DWARF; false when the entry is missing or
// damaged (the caller reads the file).
func (lc *ListCache) Write(w io.Writer, l *Listing) bool {
	rows, ok := lc.load()
	if !ok {
		return false
	}
	writeRows(w, rows, l)
	return true
}

// writeRows prints l from rows.
func writeRows(w io.Writer, rows []listRow, l *Listing) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	writeRowsTo(bw, rows, l)
}

func writeRowsTo(bw *bufio.Writer, rows []listRow, l *Listing) {
	for _, r := range rows {
		if l.Externals && !r.external {
			continue
		}
		switch l.Show {
		case ShowPrototypes, ShowLocations:
			if r.symbolOnly {
				break
			}
			if r.split {
				bw.WriteString(r.pre)
				bw.WriteString(r.name)
				bw.WriteString(r.suf)
			} else {
				bw.WriteString(r.proto)
			}
			bw.WriteByte('\n')
		case ShowSizes:
			if r.entry {
				fmt.Fprintf(bw, "%s: %d\n", r.name, r.size)
			}
		default:
			bw.WriteString(r.name)
			bw.WriteByte('\n')
		}
	}
}

// Row flags.
const (
	rowExternal = 1 << iota
	rowSymbolOnly
	rowEntry
)

// appendRows appends the encoding of rows to b: an entry is the number of
// rows, then each row.
func appendRows(b []byte, rows []listRow, protos bool) []byte {
	n := len(b)
	for _, r := range rows {
		n += 1 + 3*binary.MaxVarintLen64 + len(r.name) + len(r.proto)
	}
	b = slices.Grow(b, n-len(b))
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for _, r := range rows {
		var fl byte
		if r.external {
			fl |= rowExternal
		}
		if r.symbolOnly {
			fl |= rowSymbolOnly
		}
		if r.entry {
			fl |= rowEntry
		}
		b = append(b, fl)
		b = binary.AppendUvarint(b, r.size)
		str(r.name)
		if !protos {
			continue
		}
		// A -P line holds the name: it is written once, the line as
		// the bytes before it (their count plus one; 0 for a line
		// without the name, written whole) and after it.
		at := -1
		if r.name != "" {
			at = strings.Index(r.proto, r.name)
		}
		if at < 0 {
			b = append(b, 0)
			str(r.proto)
			continue
		}
		b = binary.AppendUvarint(b, uint64(at)+1)
		b = append(b, r.proto[:at]...)
		str(r.proto[at+len(r.name):])
	}
	return b
}

var errRows = errors.New("malformed rows")

func decodeRows(b []byte, protos bool) ([]listRow, error) {
	uv := func() (uint64, error) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, errRows
		}
		b = b[n:]
		return v, nil
	}
	str := func() (string, error) {
		n, err := uv()
		if err != nil || n > uint64(len(b)) {
			return "", errRows
		}
		s := string(b[:n])
		b = b[n:]
		return s, nil
	}
	n, err := uv()
	if err != nil || n > uint64(len(b)) { // every row takes at least one byte
		return nil, errRows
	}
	rows := make([]listRow, n)
	for i := range rows {
		if len(b) == 0 || b[0]&^(rowExternal|rowSymbolOnly|rowEntry) != 0 {
			return nil, errRows
		}
		fl := b[0]
		b = b[1:]
		r := &rows[i]
		r.external, r.symbolOnly, r.entry = fl&rowExternal != 0, fl&rowSymbolOnly != 0, fl&rowEntry != 0
		if r.size, err = uv(); err != nil {
			return nil, err
		}
		if r.name, err = str(); err != nil {
			return nil, err
		}
		if !protos {
			continue
		}
		at, err := uv()
		switch {
		case err != nil:
			return nil, err
		case at == 0:
			if r.proto, err = str(); err != nil {
				return nil, err
			}
		case at-1 > uint64(len(b)):
			return nil, errRows
		default:
			r.pre, b = string(b[:at-1]), b[at-1:]
			if r.suf, err = str(); err != nil {
				return nil, err
			}
			r.split = true
		}
	}
	if len(b) != 0 {
		return nil, errRows
	}
	return rows, nil
}
