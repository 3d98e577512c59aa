package spec

import (
	"encoding/binary"
	"fmt"
)

// In-kernel aggregation (the ftrace hist-trigger idea): a probe's first
// argument is the key, its second (optional) the value. Each hit adds one
// to the key's count, the value to its sum, and one to the value's log2
// bucket, in the "hist" hash map, whose keys and values are laid out so:
const (
	// HistKeySize: u32 probe, u32 ok bits, u64 number, StringMax bytes of text.
	HistKeySize = 16 + StringMax
	// HistBuckets log2 buckets: bucket 0 counts zeros, bucket k values in
	// [2^(k-1), 2^k), the last one everything above.
	HistBuckets = 64
	// HistValueSize: u64 count, u64 sum (two's complement for a signed
	// value), the buckets, then u64 negatives: the values below zero of
	// a signed value, which no bucket counts.
	HistValueSize = 16 + 8*HistBuckets + 8
)

// HistEntry is one key's aggregate.
type HistEntry struct {
	Probe int
	Key   Value
	Count uint64
	// Sum is the values' sum, an int64 in two's complement when Signed.
	Sum     uint64
	Buckets [HistBuckets]uint64
	// Negative counts the values below zero (only a signed value has
	// them); Signed says the value's type is signed (s8..s64).
	Negative uint64
	Signed   bool
}

// SumString spells the sum as the value's type says: signed or not.
func (e *HistEntry) SumString() string {
	if e.Signed {
		return fmt.Sprint(int64(e.Sum))
	}
	return fmt.Sprint(e.Sum)
}

// SumFloat is the sum as a float64, signed or not.
func (e *HistEntry) SumFloat() float64 {
	if e.Signed {
		return float64(int64(e.Sum))
	}
	return float64(e.Sum)
}

// DecodeHist reads one entry of the "hist" map.
func (s *Spec) DecodeHist(key, val []byte) (*HistEntry, error) {
	if len(key) != HistKeySize || len(val) != HistValueSize {
		return nil, fmt.Errorf("hist entry of %d and %d bytes", len(key), len(val))
	}
	le := binary.LittleEndian
	e := &HistEntry{Probe: int(le.Uint32(key))}
	if e.Probe >= len(s.Probes) || len(s.Probes[e.Probe].Sites) == 0 {
		return nil, fmt.Errorf("hist entry for probe %d", e.Probe)
	}
	ok := le.Uint32(key[4:])
	// Decode the key as an event's first argument.
	rec := make([]byte, EventHeader+ArgSlot)
	le.PutUint64(rec[24:], uint64(ok&1))
	copy(rec[EventHeader:], key[8:])
	site := s.Probes[e.Probe].Sites[0]
	one := Spec{Probes: []Probe{{Sites: []Site{{Args: site.Args[:1]}}}}}
	ev, err := one.Decode(rec)
	if err != nil {
		return nil, err
	}
	e.Key = ev.Args[0]
	e.Count, e.Sum = le.Uint64(val), le.Uint64(val[8:])
	for b := range e.Buckets {
		e.Buckets[b] = le.Uint64(val[16+8*b:])
	}
	e.Negative = le.Uint64(val[16+8*HistBuckets:])
	if args := site.Args; len(args) > 1 && args[1].Type != "" {
		e.Signed = args[1].Type[0] == 's'
	}
	return e, nil
}
