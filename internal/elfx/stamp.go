package elfx

import (
	"fmt"
	"os"
	"path/filepath"
)

// Stamp is the identity of the file f reads, when f was opened from one
// (Open): its absolute path, size and modification time, so that two
// Files of the same unchanged file have the same stamp and a file
// rewritten since has another. ok is false for a File read from memory.
func (f *File) Stamp() (string, bool) {
	osf, ok := f.r.(*os.File)
	if !ok {
		return "", false
	}
	st, err := osf.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	abs, err := filepath.Abs(osf.Name())
	if err != nil {
		return "", false
	}
	return fmt.Sprintf("%s %d %d", abs, st.Size(), st.ModTime().UnixNano()), true
}
