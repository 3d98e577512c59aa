package unwind

const (
	// Depth bounds the user frames one stack records, as perf's default
	// does: a profile unwinds this many (a stack key holds this many).
	Depth = 127
	// SiteDepth bounds the frames a probe site's program unwinds, as
	// Depth does a profile's: the unwinder is a loop, whose program the
	// kernel verifies in a fraction of a second at any depth (unrolled,
	// 127 frames took seconds per site).
	SiteDepth = 127
	// MaxModules bounds the mapped files one process's table lists; code
	// in further files unwinds by frame pointer.
	MaxModules = 8

	// RowSize is the size of one row of the "unwind_rows" array:
	//
	//	u64 pc      the file's virtual address where the row starts
	//	s32 cfa     CFA = (SP or FP) + cfa
	//	s16 fp      the caller's frame pointer is saved at CFA + fp
	//	u8  flags   FlagCFASP, FlagFPSaved, FlagPLT, FlagStop
	//	u8  pad
	RowSize = 16
	// ModuleSize is the size of one module of a "unwind_procs" value:
	//
	//	u64 start, end  the mapping's addresses in the process
	//	u64 bias        address in the process minus address in the file
	//	u64 rows        first row | (end row << 32)
	ModuleSize = 32
	// ProcValueSize is the size of a process's "unwind_procs" value.
	ProcValueSize = MaxModules * ModuleSize
)

// Row flags.
const (
	FlagCFASP   = 1 << 0 // CFA from the stack pointer, else the frame pointer
	FlagFPSaved = 1 << 1 // the caller's frame pointer is saved at CFA + fp
	FlagPLT     = 1 << 2 // a PLT entry: CFA += 8 past the entry's push
	FlagStop    = 1 << 3 // no caller (the return address is undefined)
)

// Row is one row of the unwind table as the BPF program reads it.
type Row struct {
	PC     uint64
	CFAOff int32
	FPOff  int16
	Flags  uint8
	Pad    uint8
}

// FPRow unwinds by frame pointer: CFA = FP + 16, the caller's frame pointer
// at CFA - 16, the return address at CFA - 8.
var FPRow = Row{CFAOff: 16, FPOff: -16, Flags: FlagFPSaved}
