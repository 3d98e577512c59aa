package line_test

import (
	"crypto/md5"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/binscope/binscope/dwarf/line"
	"github.com/binscope/binscope/internal/testutil"
)

// TestMD5: clang's DWARF 5 file entries carry each file's MD5
// (DW_FORM_data16): the digests read are those llvm-dwarfdump prints,
// and the source file's is the digest of its bytes.
func TestMD5(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "m.c")
	code := []byte("#include <stdio.h>\n#include <stdlib.h>\nint main(int argc, char **argv) { puts(argv[0]); return abs(argc); }\n")
	if err := os.WriteFile(src, code, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "m")
	if out, err := exec.Command("clang", "-g", "-gdwarf-5", "-O1", "-o", bin, src).CombinedOutput(); err != nil {
		testutil.Skipf(t, "clang: %v %s", err, out)
	}
	out, err := exec.Command("llvm-dwarfdump", "--debug-line", bin).Output()
	if err != nil {
		testutil.Skipf(t, "llvm-dwarfdump: %v", err)
	}
	var want []string
	for _, m := range regexp.MustCompile(`md5_checksum: ([0-9a-f]{32})`).FindAllSubmatch(out, -1) {
		want = append(want, string(m[1]))
	}
	b, str := sections(t, bin)
	p, err := line.New(&line.Sections{Line: b, LineStr: str, Order: binaryOrder}, 0, &line.Unit{AddrSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range p.Files {
		if f.HasMD5 {
			got = append(got, hex.EncodeToString(f.MD5[:]))
		}
	}
	if len(want) < 2 || len(got) != len(want) {
		t.Fatalf("%d digests, llvm-dwarfdump %d: want the same, at least 2", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("file %d: MD5 %s, llvm-dwarfdump %s", i, got[i], want[i])
		}
	}
	if sum := md5.Sum(code); p.Files[0].MD5 != sum || filepath.Base(p.Files[0].Name) != "m.c" {
		t.Errorf("file 0: %s with MD5 %x, want m.c with %x", p.Files[0].Name, p.Files[0].MD5, sum)
	}
}
