package btf

import (
	"bytes"
	"fmt"
	"github.com/binscope/binscope/internal/elfx"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// WriteSection puts raw BTF into the ELF file at path as its .BTF section,
// replacing one it has, as pahole -J does: with llvm-objcopy (or the one
// $LLVM_OBJCOPY names, as pahole reads it), else binutils' objcopy. The
// section is SHT_PROGBITS and not loaded (no SHF_ALLOC).
func WriteSection(path string, raw []byte) error {
	ef, err := elfx.Open(path)
	if err != nil {
		return fmt.Errorf("%s: not an ELF file to add .BTF to: %v", path, err)
	}
	had := ef.Section(".BTF") != nil
	ef.Close()
	tool, err := objcopy()
	if err != nil {
		return fmt.Errorf("%s: adding .BTF: %v (install binutils or llvm, or use --btf_encode_detached)", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".btf-*")
	if err != nil {
		tmp, err = os.CreateTemp("", ".btf-*")
		if err != nil {
			return fmt.Errorf("%s: adding .BTF: %v", path, err)
		}
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(raw); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: adding .BTF: %v", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s: adding .BTF: %v", path, err)
	}
	var args []string
	if had {
		args = append(args, "--remove-section=.BTF")
	}
	args = append(args, "--add-section", ".BTF="+tmp.Name(), "--set-section-flags", ".BTF=contents,readonly", path)
	var errb bytes.Buffer
	cmd := exec.Command(tool, args...)
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: adding .BTF with %s: %v: %s", path, tool, err, strings.TrimSpace(errb.String()))
	}
	return nil
}

func objcopy() (string, error) {
	if t := os.Getenv("LLVM_OBJCOPY"); t != "" {
		return exec.LookPath(t)
	}
	for _, t := range []string{"llvm-objcopy", "objcopy"} {
		if p, err := exec.LookPath(t); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("neither llvm-objcopy nor objcopy found")
}
