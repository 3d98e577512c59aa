package spec

// SiteTracepoint is a kernel tracepoint: Site.Function names it
// (GROUP:NAME); its program reads the fields of the event's record.
const SiteTracepoint = "tracepoint"

// CtxField, in a Chain, is the tracepoint record field the chain starts
// from: its value is the Size bytes at Offset of the record (the program's
// context), zero-extended; Derefs follow it as they follow a register.
//
// Text marks a character array held in the record itself: the value is
// its bytes up to the first NUL (a "cstring" fetch), not a pointer.
type CtxField struct {
	Offset int16 `json:"offset"`
	Size   int   `json:"size"`
	Text   bool  `json:"text,omitempty"`
	// DataLoc marks a __data_loc field: the u32 at Offset holds where its
	// data is in the record (low 16 bits) and its length (high 16).
	DataLoc bool `json:"data_loc,omitempty"`
}
