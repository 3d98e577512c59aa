package attach

import "fmt"

// GateHooks are called while a command started by StartGated is stopped,
// from the goroutine that called it.
type GateHooks struct {
	// Exec is called once, right after the exec: the program, the dynamic
	// loader and the vDSO are mapped, and none of their code ran. The
	// moment to name the process to the programs' descendant check, so
	// that nothing it does is missed, the constructors of its libraries
	// included.
	Exec func(pid int)
	// Loaded is called each time the dynamic loader has mapped the
	// libraries it was asked for (its debugger hook _dl_debug_state with
	// r_debug.r_state RT_CONSISTENT), before their constructors run, and
	// at the program's entry point: the moments to read the process's
	// mappings for the stack unwinder. A program without an interpreter
	// (a static one, Go's) has its code mapped at Exec; Loaded comes at
	// its entry point.
	Loaded func(pid int)
}

// EndedError is StartGated's error for a command that ended before its
// entry point (the dynamic loader failed): Status is its exit status, 128
// plus the signal for a signal.
type EndedError struct{ Status int }

func (e *EndedError) Error() string {
	return fmt.Sprintf("the command ended before its entry point, with status %d", e.Status)
}
