package goref

import (
	"fmt"
	"os"
	"strings"

	"github.com/binscope/binscope/internal/arch"
)

// goVersion is the go command's version with GOTOOLCHAIN=toolchain ("" for
// the environment's choice), which may download that toolchain (its
// progress goes to o.Log). The error carries the go command's last word.
func goVersion(o *Options, modCache, toolchain string) (string, error) {
	env := os.Environ()
	if toolchain != "" {
		env = append(env, "GOTOOLCHAIN="+toolchain)
	}
	out, errOut, err := goRun(o, modCache, "", env, "env", "GOVERSION")
	if err != nil {
		return "", fmt.Errorf("%s", lastWord(errOut, err))
	}
	return strings.TrimSpace(out), nil
}

// toolchainFor picks the toolchain that builds the reference of a binary
// built with want (go1.19.8), local being the go command's own: want
// itself when the go command can have it; else the nearest newer release
// it can have (go1.20, go1.21.0, ... up to the local one), with one line
// on o.Log saying that layouts of the runtime and standard library may
// differ from the binary's. A version that is not a release (devel)
// builds with the local toolchain.
func toolchainFor(o *Options, modCache, want, local string) string {
	if want == local || o.LocalToolchain || !releaseRE().MatchString(want) {
		return local
	}
	v, err := goVersion(o, modCache, want)
	if err == nil && v == want {
		return want
	}
	why := fmt.Sprint(err)
	if err == nil {
		why = "the go command reported " + v
	}
	chosen := local
	for m := arch.GoMinor(want) + 1; m > 1 && m < arch.GoMinor(local); m++ {
		c := release(m)
		if v, err := goVersion(o, modCache, c); err == nil && v == c {
			chosen = c
			break
		}
	}
	if o.Log != nil {
		fmt.Fprintf(o.Log, "goref: the binary's %s is not available (%s); building the reference with %s: layouts of the runtime and standard library may differ from the binary's\n", want, why, chosen)
	}
	return chosen
}

// release names the first release of Go 1.m as GOTOOLCHAIN spells it:
// go1.20 before Go 1.21, go1.21.0 from it on.
func release(m int) string {
	if m < 21 {
		return fmt.Sprintf("go1.%d", m)
	}
	return fmt.Sprintf("go1.%d.0", m)
}

// ldflags are the linker flags a reference needs with toolchain: from
// Go 1.23 on -checklinkname=0, which lets //go:linkname keep any function
// (older linkers neither check nor know the flag), and from Go 1.25 on
// -e, every error reported (the functions of the binary the toolchain's
// source lacks are named at once, not 20 at a time).
func ldflags(toolchain string) string {
	var f []string
	m := arch.GoMinor(toolchain)
	if m == 0 || m >= 23 {
		f = append(f, "-checklinkname=0")
	}
	if m == 0 || m >= 25 {
		f = append(f, "-e")
	}
	return strings.Join(f, " ")
}

// goLine is the go directive: the older of the binary's language version
// and the toolchain's.
func goLine(binary, toolchain string) string {
	a, b := arch.GoMinor(binary), arch.GoMinor(toolchain)
	if a == 0 || b != 0 && b < a {
		a = b
	}
	if a == 0 {
		a = 21
	}
	return fmt.Sprintf("1.%d", a)
}

// lastWord is the last line of the go command's standard error that is
// not a download notice, else err's text.
func lastWord(errOut string, err error) string {
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !strings.HasPrefix(l, "go: downloading") {
			return l
		}
	}
	if err != nil {
		return err.Error()
	}
	return "failed"
}
