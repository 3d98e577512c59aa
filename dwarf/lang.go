package dwarf

import (
	"strings"

	"github.com/binscope/binscope/types"
)

// wantLang says whether the file was opened for units of language l
// (Options.Langs; none: every language).
func (f *File) wantLang(l types.Lang) bool {
	if len(f.opts.Langs) == 0 {
		return true
	}
	for _, x := range f.opts.Langs {
		if x == l {
			return true
		}
	}
	return false
}

// DWARF language codes (DW_LANG_*) the project tells apart.
const (
	langC89          = 0x01
	langC            = 0x02
	langCPlusPlus    = 0x04
	langC99          = 0x0c
	langGo           = 0x16
	langCPlusPlus03  = 0x19
	langCPlusPlus11  = 0x1a
	langRust         = 0x1c
	langC11          = 0x1d
	langCPlusPlus14  = 0x21
	langCPlusPlus17  = 0x2a
	langCPlusPlus20  = 0x2b
	langC17          = 0x2c
	langZig          = 0x26
	langMipsAsm      = 0x8001
	langObjCPlusPlus = 0x11
)

// langOf names a compile unit's language from DW_AT_language, corrected by
// DW_AT_producer (Zig 0.11 reports DW_LANG_C99).
func langOf(e *Entry, producer string) types.Lang {
	switch {
	case strings.HasPrefix(producer, "zig"):
		return types.LangZig
	case strings.HasPrefix(producer, "Go cmd/compile"):
		return types.LangGo
	case strings.HasPrefix(producer, "clang LLVM (rustc"):
		return types.LangRust
	}
	code, _ := e.Int(AttrLanguage)
	switch code {
	case langC89, langC, langC99, langC11, langC17:
		return types.LangC
	case langCPlusPlus, langCPlusPlus03, langCPlusPlus11, langCPlusPlus14, langCPlusPlus17, langCPlusPlus20, langObjCPlusPlus:
		return types.LangCPlusPlus
	case langGo:
		return types.LangGo
	case langRust:
		return types.LangRust
	case langZig:
		return types.LangZig
	case langMipsAsm:
		return types.LangAsm
	}
	return types.LangUnknown
}
