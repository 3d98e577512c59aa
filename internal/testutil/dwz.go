package testutil

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// dwzHeader holds types two programs share, which dwz -m moves into the
// alternate file.
const dwzHeader = `struct shared_base { int id; long flags; char *name; void *data; };
struct shared_nested { struct shared_base base; int count; double value; char buffer[64]; };
struct shared_list { struct shared_nested item; struct shared_list *next, *prev; };
enum shared_state { STATE_INIT, STATE_RUNNING, STATE_PAUSED, STATE_STOPPED, STATE_ERROR };
typedef unsigned long shared_handle_t;
typedef int (*shared_callback_t)(struct shared_base *, enum shared_state);
struct shared_context {
	struct shared_base base;
	struct shared_list *items;
	shared_callback_t callback;
	shared_handle_t handle;
	enum shared_state state;
	int refcount;
	char description[128];
};
`

var dwzProgs = [2]string{`#include "shared.h"
int lib_init(struct shared_context *ctx) { ctx->state = STATE_INIT; ctx->refcount = 1; return 0; }
int main(void) {
	struct shared_context ctx = { .base = { .id = 1, .name = "prog1" } };
	struct shared_nested item = { .count = 42, .value = 3.14 };
	lib_init(&ctx);
	return item.count;
}
`, `#include "shared.h"
shared_handle_t prog2_work(struct shared_context *ctx) {
	struct shared_list node = { .item = { .base = { .id = 2 }, .count = 10 } };
	ctx->items = &node;
	ctx->state = STATE_PAUSED;
	return ctx->handle;
}
int main(void) {
	struct shared_context ctx = { .base = { .id = 99, .name = "prog2" } };
	return (int)prog2_work(&ctx);
}
`}

// DwzPair builds two C programs that share types, with gcc flag (-gdwarf-4,
// -g), keeps a copy of each, then compresses the pair with dwz -m into
// dir/alt (with dwzArgs, such as --dwarf-5 for DWARF 5's supplementary
// file and .debug_sup): plain are the copies, packed the compressed
// programs (whose .gnu_debugaltlink or .debug_sup names "alt").
func DwzPair(t testing.TB, flag string, dwzArgs ...string) (plain, packed [2]string, alt string) {
	t.Helper()
	for _, tool := range []string{"gcc", "dwz"} {
		if _, err := exec.LookPath(tool); err != nil {
			Skipf(t, "%s not installed: %v", tool, err)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "shared.h"), []byte(dwzHeader), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, src := range dwzProgs {
		name := filepath.Join(dir, "prog"+string(rune('1'+i)))
		if err := os.WriteFile(name+".c", []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("gcc", flag, "-I", dir, "-o", name, name+".c").CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, out)
		}
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		plain[i], packed[i] = name+".plain", name
		if err := os.WriteFile(plain[i], data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	alt = filepath.Join(dir, "alt")
	cmd := exec.Command("dwz", append(append(dwzArgs, "-m", "alt"), packed[0], packed[1])...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dwz -m: %v\n%s", err, out)
	}
	if out, err := exec.Command("readelf", "-S", packed[0]).Output(); err != nil ||
		!bytes.Contains(out, []byte(".gnu_debugaltlink")) && !bytes.Contains(out, []byte(".debug_sup")) {
		t.Fatalf("dwz wrote neither .gnu_debugaltlink nor .debug_sup: %v", err)
	}
	return plain, packed, alt
}
