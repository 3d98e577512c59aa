package spec

import "fmt"

// The record a probe sends to the "events" ring buffer for each hit, in
// the machine's byte order (little-endian on x86-64 and arm64). The BPF
// programs (package bpfprog) write it, Decode reads it, and the bpf-c
// generator (package codegen) declares it as struct event_pN, with
// _Static_asserts that clang checks against these constants:
//
//	u32 probe       the probe's index in the spec          (EventProbe)
//	u32 site        the site's index in the probe          (EventSite)
//	u64 pid_tgid    process << 32 | thread                 (EventPidTgid)
//	u64 time_ns     bpf_ktime_get_ns()                     (EventTime)
//	u64 ok          bit k: argument k was read             (EventOK)
//
// then ArgSlot bytes per argument:
//
//	u64 value       a number, a string's length, an interface's type word
//	u8  data[StringMax]  text (string, cstring, bytes), an interface's data word
//
// then, when the session takes stacks, the user stack: u64 return
// addresses, innermost first, zero after the last.
const (
	EventProbe   = 0
	EventSite    = 4
	EventPidTgid = 8
	EventTime    = 16
	EventOK      = 24
	EventHeader  = 32
	// StringMax bounds the bytes of text an argument carries.
	StringMax = 64
	ArgSlot   = 8 + StringMax
	// MaxArgs bounds a site's arguments (the ok bits, the capture slots).
	MaxArgs = 16
	// StructSlots bounds the slots one whole struct's bytes take.
	StructSlots = 8
	// RingBytes is the ring buffer's size: 1 MiB holds about 5,000
	// records of two arguments between two reads.
	RingBytes = 1 << 20
)

// ProgramName names the program of site j of probe i ("p0_s1"), in the
// BPF collection and in generated bpf-c.
func ProgramName(i, j int) string { return fmt.Sprintf("p%d_s%d", i, j) }
