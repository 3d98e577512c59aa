package inflate

import (
	"bytes"
	"compress/zlib"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// The oracle is compress/zlib: every stream here inflates to what it
// gives, and a stream it refuses is refused.

// samples are inputs of every kind of block: random bytes (stored
// blocks), text-like data with long matches, runs (distance 1 and short
// distances), at every compression level and Huffman-only.
func samples(t testing.TB) map[string][]byte {
	rng := rand.New(rand.NewSource(1))
	words := []string{"struct ", "DW_TAG_member", " int", "\x00\x00\x00", "AgentTimeoutCB", "std::", "char", "\n", "0123456789abcdef"}
	text := func(n int) []byte {
		var b bytes.Buffer
		for b.Len() < n {
			b.WriteString(words[rng.Intn(len(words))])
			if rng.Intn(8) == 0 {
				b.WriteByte(byte(rng.Intn(256)))
			}
		}
		return b.Bytes()[:n]
	}
	random := func(n int) []byte {
		b := make([]byte, n)
		rng.Read(b)
		return b
	}
	runs := func(n int) []byte {
		b := make([]byte, 0, n)
		for len(b) < n {
			pat := random(1 + rng.Intn(9))
			for k := rng.Intn(300); k > 0 && len(b) < n; k-- {
				b = append(b, pat...)
			}
		}
		return b[:n]
	}
	in := map[string][]byte{"empty": nil, "one": {7}, "text-100": text(100), "random-70k": random(70000),
		"text-1m": text(1 << 20), "runs-300k": runs(300 << 10), "mixed": append(append(text(200<<10), random(90<<10)...), runs(200<<10)...)}
	out := map[string][]byte{}
	for name, b := range in {
		for _, level := range []int{zlib.HuffmanOnly, zlib.NoCompression, zlib.BestSpeed, zlib.DefaultCompression, zlib.BestCompression} {
			var z bytes.Buffer
			w, err := zlib.NewWriterLevel(&z, level)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(b)
			w.Close()
			out[name+"/"+string(rune('0'+level+2))] = z.Bytes()
		}
	}
	return out
}

func oracle(z []byte) ([]byte, error) {
	r, err := zlib.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

// whole inflates z into a buffer of size bytes, step bytes asked at a
// time, and checks the stream's end.
func whole(z []byte, size, step int) ([]byte, error) {
	r, err := NewReader(bytes.NewReader(z), 0, int64(len(z)))
	if err != nil {
		return nil, err
	}
	out := make([]byte, size)
	at := 0
	for {
		want := min(at+step, size)
		if at, err = r.Into(out, at, want); err != nil {
			return nil, err
		}
		if at == size || r.Done() {
			break
		}
	}
	if at, err = r.Into(out, at, size); err != nil {
		return nil, err
	}
	if !r.Done() {
		return nil, ErrLong
	}
	if at != size {
		return nil, io.ErrUnexpectedEOF
	}
	return out, nil
}

func TestInflateInto(t *testing.T) {
	for name, z := range samples(t) {
		want, err := oracle(z)
		if err != nil {
			t.Fatalf("%s: oracle: %v", name, err)
		}
		for _, step := range []int{1, 7, 4096, 1 << 30} {
			if step == 1 && len(want) > 100<<10 {
				continue
			}
			got, err := whole(z, len(want), step)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s, step %d: %d bytes, %v; want %d bytes", name, step, len(got), err, len(want))
			}
		}
		// A size the stream does not have is an error.
		if _, err := whole(z, len(want)+1, 1<<30); err == nil {
			t.Errorf("%s: one byte more than the stream: no error", name)
		}
		if len(want) > 0 {
			if _, err := whole(z, len(want)-1, 1<<30); err == nil {
				t.Errorf("%s: one byte less than the stream: no error", name)
			}
		}
	}
}

func TestInflateRead(t *testing.T) {
	for name, z := range samples(t) {
		want, _ := oracle(z)
		for _, n := range []int{1, 3000, 1 << 20} {
			r, err := NewReader(bytes.NewReader(z), 0, int64(len(z)))
			if err != nil {
				t.Fatal(err)
			}
			var got []byte
			buf := make([]byte, n)
			for {
				k, err := r.Read(buf)
				got = append(got, buf[:k]...)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s, reads of %d: %d bytes, want %d", name, n, len(got), len(want))
			}
		}
	}
}

// TestInflateCorrupt: truncated and altered streams are refused where
// the oracle refuses them, inflate to what it gives where it takes them,
// and never panic.
func TestInflateCorrupt(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	checked := 0
	for name, z := range samples(t) {
		if len(z) > 200<<10 {
			continue
		}
		clean, _ := oracle(z)
		for i := 0; i < 60; i++ {
			bad := bytes.Clone(z)
			switch i % 3 {
			case 0:
				bad = bad[:rng.Intn(len(bad))]
			case 1:
				bad[rng.Intn(len(bad))] ^= 1 << rng.Intn(8)
			default:
				p := rng.Intn(len(bad))
				bad[p] = byte(rng.Intn(256))
			}
			want, werr := oracle(bad)
			got, err := whole(bad, len(clean), 1<<16)
			if werr != nil && err == nil {
				t.Errorf("%s #%d: the oracle refuses it (%v), inflated", name, i, werr)
			}
			if werr == nil && (err != nil || !bytes.Equal(got, want)) {
				t.Errorf("%s #%d: the oracle takes it, got %v", name, i, err)
			}
			checked++
		}
	}
	if checked < 1000 {
		t.Fatalf("%d corrupt streams checked, want at least 1000", checked)
	}
}

// TestInflateDebugSections inflates the compressed DWARF sections of the
// machine's debug files (written by binutils' zlib) as compress/zlib does.
func TestInflateDebugSections(t *testing.T) {
	files, _ := filepath.Glob("/usr/lib/debug/.build-id/*/*.debug")
	secs := 0
	var bytesIn int64
	for _, p := range files {
		if secs >= 40 || bytesIn > 60<<20 {
			break
		}
		ef, err := elf.Open(p)
		if err != nil {
			continue
		}
		f, _ := os.Open(p)
		for _, s := range ef.Sections {
			if s.Flags&elf.SHF_COMPRESSED == 0 || s.FileSize > 20<<20 {
				continue
			}
			var h [24]byte
			f.ReadAt(h[:], int64(s.Offset))
			if elf.CompressionType(binary.LittleEndian.Uint32(h[:])) != elf.COMPRESS_ZLIB {
				continue
			}
			size := int(binary.LittleEndian.Uint64(h[8:]))
			want, err := io.ReadAll(s.Open())
			if err != nil || len(want) != size {
				t.Fatalf("%s %s: debug/elf: %d bytes, %v", p, s.Name, len(want), err)
			}
			r, err := NewReader(f, int64(s.Offset)+24, int64(s.FileSize)-24)
			if err != nil {
				t.Fatalf("%s %s: %v", p, s.Name, err)
			}
			got := make([]byte, size)
			at, err := r.Into(got, 0, size)
			if err != nil || at != size || !r.Done() || !bytes.Equal(got, want) {
				t.Errorf("%s %s: %d of %d bytes, done %v, %v", p, s.Name, at, size, r.Done(), err)
			}
			secs++
			bytesIn += int64(s.FileSize)
		}
		f.Close()
		ef.Close()
	}
	if secs < 10 {
		t.Fatalf("%d compressed debug sections found under /usr/lib/debug, want at least 10", secs)
	}
}

func TestInflateErrorsWrap(t *testing.T) {
	_, err := NewReader(bytes.NewReader([]byte{0x78, 0x00}), 0, 2)
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("a bad header: %v, want ErrCorrupt", err)
	}
}
