// Package cache keeps, under one root directory (see Root), what binscope
// keeps on disk between runs, written atomically (WriteAtomic): the index
// cache here, goprobe's probe cache (runner.ProbeCache) in Root/probes.
//
// The index cache keeps what a cold run computed from a binary for the
// next run on the same binary, as gdb's index-cache keeps its symbol
// index: one file per entry under ROOT/index, keyed by the
// binary's identity (its build-id, or its path; with its size and mtime,
// and those of the separate debug file the DWARF came from), the format
// version of the entry and the identity of the program that wrote it, so
// that a rebuilt binscope never reads what an older one computed.
//
// An entry is written atomically (a temporary file renamed into place) and
// carries its key and checksums: a truncated, corrupt or foreign entry is
// ignored, never trusted, and the caller computes the answer again. Get
// checks the whole entry; Map, whose entries are hundreds of megabytes,
// checks the whole only when the file changed since it was written (see
// Map).
// BINSCOPE_INDEX_CACHE=off turns the index cache off; any other value is
// the directory to keep it in, in place of ROOT/index.
package cache

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/binscope/binscope/internal/elfx"
)

// RootEnv names the environment variable that moves every cache: the
// index cache to $BINSCOPE_CACHE/index, the probe cache to
// $BINSCOPE_CACHE/probes.
const RootEnv = "BINSCOPE_CACHE"

// Env names the environment variable that moves the index cache alone
// ("off" turns it off).
const Env = "BINSCOPE_INDEX_CACHE"

// Root is the directory every cache lives under: $BINSCOPE_CACHE, else
// binscope in the user's cache directory ($XDG_CACHE_HOME/binscope, else
// ~/.cache/binscope).
func Root() (string, error) {
	if d := os.Getenv(RootEnv); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "binscope"), nil
}

// maxAge is how long an entry not rewritten stays: older entries are
// removed when a new one is written.
const maxAge = 30 * 24 * time.Hour

// Cache is a directory of entries. A nil *Cache is a cache that is off:
// Get finds nothing and Put writes nothing.
type Cache struct {
	Dir string
	// Log, when set, receives one line for each entry that was present
	// but not used (corrupt, truncated, of another key) and for each that
	// could not be written.
	Log func(msg string)
}

// Open returns the index cache the environment asks for: nil when
// BINSCOPE_INDEX_CACHE is "off" or no cache directory is known.
func Open(log func(string)) *Cache {
	dir := os.Getenv(Env)
	switch {
	case dir == "off":
		return nil
	case dir == "":
		root, err := Root()
		if err != nil {
			return nil
		}
		dir = filepath.Join(root, "index")
	}
	return &Cache{Dir: dir, Log: log}
}

func (c *Cache) logf(format string, args ...any) {
	if c.Log != nil {
		c.Log(fmt.Sprintf(format, args...))
	}
}

// magic starts every entry; the format version follows it.
const magic = "binscope-index 3\n" // 3: the written stamp, the head's own checksum

// Key is the key of an entry: a digest of the parts, which name what the
// entry's contents depend on.
func Key(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\n", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// FileKey is the identity of the code and debug info read from ef (and
// from debug, the separate debug file, when not nil or ef): the build-id
// with the file's size and mtime (strip and objcopy keep the build-id
// while changing what a reader finds), or without a build-id its absolute
// path, size and mtime; then the debug file's path, size and mtime.
func FileKey(ef, debug *elfx.File) (string, error) {
	id, err := stamp(ef.Path)
	if err != nil {
		return "", err
	}
	if ef.BuildID != "" {
		id = "build-id " + ef.BuildID + " " + id
	} else {
		abs, err := filepath.Abs(ef.Path)
		if err != nil {
			return "", err
		}
		id = "path " + abs + " " + id
	}
	if debug != nil && debug != ef {
		abs, err := filepath.Abs(debug.Path)
		if err != nil {
			return "", err
		}
		ds, err := stamp(debug.Path)
		if err != nil {
			return "", err
		}
		id += " debug " + abs + " " + ds
	}
	return id, nil
}

// stamp is a file's size and modification time.
func stamp(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(st.Size(), 10) + " " + strconv.FormatInt(st.ModTime().UnixNano(), 10), nil
}

// Self is the identity of the running program (its path, size and
// mtime): entries written by another build of binscope are not read.
func Self() string {
	exe, err := os.Executable()
	if err != nil {
		return "unknown"
	}
	s, err := stamp(exe)
	if err != nil {
		return exe
	}
	return exe + " " + s
}

// Path is the file of the entry of this kind and key.
func (c *Cache) Path(kind, key string) string { return c.path(kind, key) }

func (c *Cache) path(kind, key string) string {
	return filepath.Join(c.Dir, key[:2], key[2:]+"."+kind)
}

// Get returns the contents of the entry of this kind and key, after
// checking its version, key and checksum; ok is false when there is none
// or it cannot be trusted.
func (c *Cache) Get(kind string, version uint32, key string) (data []byte, ok bool) {
	if c == nil {
		return nil, false
	}
	p := c.path(kind, key)
	b, err := os.ReadFile(p)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			c.logf("index cache: %s: %v; reading the binary", p, err)
		}
		return nil, false
	}
	data, err = unframe(b, version, key)
	if err != nil {
		c.logf("index cache: %s: %v; ignored, reading the binary", p, err)
		return nil, false
	}
	return data, true
}

// Put writes the entry of this kind and key atomically: readers see the
// old entry or the whole new one. It removes entries older than 30 days.
func (c *Cache) Put(kind string, version uint32, key string, data []byte) {
	c.PutStream(kind, version, key, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// PutStream is Put of the data write writes, as it writes them: an entry
// made in pieces is written while the next pieces are made. An error of
// write leaves the old entry.
func (c *Cache) PutStream(kind string, version uint32, key string, write func(w io.Writer) error) {
	if c == nil {
		return
	}
	p := c.path(kind, key)
	// The entry's modification time, which its head records: a file
	// changed since has another (see Map).
	written := time.Now().Truncate(time.Microsecond)
	err := writeAtomic(p, written, func(w io.Writer) error {
		fw := &frameWriter{w: w}
		fw.head = frameHead(version, written, key)
		fw.Write(fw.head)
		fw.n = 0 // the length counts the data only
		if err := write(fw); err != nil {
			return err
		}
		if fw.err != nil {
			return fw.err
		}
		_, err := w.Write(fw.tail())
		return err
	})
	if err != nil {
		c.logf("index cache: %v", err)
		return
	}
	c.prune(filepath.Dir(p))
}

// WriteAtomic writes what write writes to p, which readers see whole or
// not at all (a temporary file beside it, renamed into place); an error
// of write leaves p as it was.
func WriteAtomic(p string, write func(w io.Writer) error) error {
	return writeAtomic(p, time.Time{}, write)
}

// writeAtomic is WriteAtomic, giving the file the modification time
// mtime before it is renamed into place, unless zero.
func writeAtomic(p string, mtime time.Time, write func(w io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(tmp, 256<<10)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if !mtime.IsZero() {
		if err := os.Chtimes(tmp.Name(), mtime, mtime); err != nil {
			os.Remove(tmp.Name())
			return err
		}
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// prune removes the entries of dir (one of the 256 subdirectories) not
// written for maxAge, and temporary files a killed writer left.
func (c *Cache) prune(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	now := time.Now()
	for _, e := range ents {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		age := now.Sub(info.ModTime())
		if age > maxAge || (strings.HasPrefix(e.Name(), ".tmp-") && age > time.Hour) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// An entry is laid out as its head (magic, version, the time it was
// written in nanoseconds, key), its data, the length of the data, the
// CRC-32C of the head and the length, and the CRC-32C of everything
// before it: the length comes after the data, so that an entry is written
// as its data is made.
func frameHead(version uint32, written time.Time, key string) []byte {
	b := make([]byte, 0, headLen(key))
	b = append(b, magic...)
	b = binary.LittleEndian.AppendUint32(b, version)
	b = binary.LittleEndian.AppendUint64(b, uint64(written.UnixNano()))
	return append(b, key...)
}

func headLen(key string) int { return len(magic) + 4 + 8 + len(key) }

// tailLen is the length and the two checksums that end an entry.
const tailLen = 8 + 4 + 4

// frameWriter writes an entry's head and data, summing them and counting
// the data, and keeps the first error.
type frameWriter struct {
	w    io.Writer
	head []byte
	sum  uint32
	n    uint64
	err  error
}

func (f *frameWriter) Write(b []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	f.sum = crc32.Update(f.sum, castagnoli(), b)
	f.n += uint64(len(b))
	_, f.err = f.w.Write(b)
	return len(b), f.err
}

// tail is the length and the checksums that end the entry.
func (f *frameWriter) tail() []byte { return frameTail(f.head, f.sum, f.n) }

// frameTail is the end of the entry of this head and n bytes of data,
// sum the checksum of the head and data.
func frameTail(head []byte, sum uint32, n uint64) []byte {
	b := binary.LittleEndian.AppendUint64(nil, n)
	hs := crc32.Update(crc32.Checksum(head, castagnoli()), castagnoli(), b)
	b = binary.LittleEndian.AppendUint32(b, hs)
	return binary.LittleEndian.AppendUint32(b, crc32.Update(sum, castagnoli(), b))
}

// castagnoli's table is made on first use: making it takes a tenth of a
// millisecond, which every program start would pay.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// unframe checks an entry, the whole of it, and returns its data.
func unframe(b []byte, version uint32, key string) ([]byte, error) {
	data, _, err := unframeHead(b, version, key)
	if err != nil {
		return nil, err
	}
	sum := binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(b[:len(b)-4], castagnoli()) != sum {
		return nil, errCorrupt
	}
	return data, nil
}

var errCorrupt = errors.New("checksum mismatch (corrupt entry)")

// unframeHead checks an entry's head and length, and returns its data
// unchecked and the time the head says it was written.
func unframeHead(b []byte, version uint32, key string) (data []byte, written time.Time, err error) {
	head := headLen(key)
	if len(b) < head+tailLen {
		return nil, written, errors.New("truncated entry")
	}
	if string(b[:len(magic)]) != magic {
		return nil, written, errors.New("not an index entry")
	}
	if v := binary.LittleEndian.Uint32(b[len(magic):]); v != version {
		return nil, written, fmt.Errorf("format version %d, not %d", v, version)
	}
	if string(b[head-len(key):head]) != key {
		return nil, written, errors.New("entry of another key")
	}
	tail := b[len(b)-tailLen:]
	n := binary.LittleEndian.Uint64(tail)
	if n != uint64(len(b)-head-tailLen) {
		return nil, written, errors.New("truncated entry")
	}
	sum := crc32.Update(crc32.Checksum(b[:head], castagnoli()), castagnoli(), tail[:8])
	if sum != binary.LittleEndian.Uint32(tail[8:]) {
		return nil, written, errCorrupt
	}
	written = time.Unix(0, int64(binary.LittleEndian.Uint64(b[len(magic)+4:])))
	return b[head : len(b)-tailLen], written, nil
}
