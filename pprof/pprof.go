// Package pprof encodes sampled stacks as a pprof profile (the protobuf
// that go tool pprof, its web UI and continuous profilers read), with
// github.com/google/pprof/profile: samples with their count and CPU time,
// locations by address in their mappings (file, build-id, file offset),
// functions with file and line, an address's inline expansions as several
// Lines of one Location (innermost first, as pprof expresses inlining),
// and kernel frames in a mapping named [kernel].
package pprof

import (
	"io"
	"time"

	"github.com/google/pprof/profile"
)

// KernelFile is the file name of the mapping kernel locations are in.
const KernelFile = "[kernel]"

// Mapping is a file mapped at [Start, Limit) from file offset Offset.
type Mapping struct {
	Start, Limit, Offset uint64
	File, BuildID        string
}

// Line is a function and the source line a location is at in it.
type Line struct {
	Func, File string
	Line       int
}

// Frame is one address of a stack: its mapping (nil when none holds it)
// and its lines, innermost first (several for inline expansions).
type Frame struct {
	Addr  uint64
	Map   *Mapping
	Lines []Line
}

// Builder collects samples into one profile.
type Builder struct {
	p       *profile.Profile
	maps    map[Mapping]*profile.Mapping
	kernel  *profile.Mapping
	locs    map[locKey]*profile.Location
	funcs   map[Line]*profile.Function // keyed without Line
	samples map[string]*profile.Sample
}

type locKey struct {
	m    *profile.Mapping
	addr uint64
}

// NewBuilder starts a CPU profile sampled hz times a second per CPU for
// the duration d, its two sample values being samples (count) and CPU
// time (nanoseconds; each sample one period, 1s/hz).
func NewBuilder(hz int, start time.Time, d time.Duration) *Builder {
	period := int64(time.Second) / int64(max(hz, 1))
	return &Builder{
		p: &profile.Profile{
			SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
			PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
			Period:        period,
			TimeNanos:     start.UnixNano(),
			DurationNanos: int64(d),
		},
		maps:    map[Mapping]*profile.Mapping{},
		locs:    map[locKey]*profile.Location{},
		funcs:   map[Line]*profile.Function{},
		samples: map[string]*profile.Sample{},
	}
}

// SetKernel names the kernel's build-id, for its mapping.
func (b *Builder) SetKernel(buildID string) { b.kernelMap().BuildID = buildID }

func (b *Builder) kernelMap() *profile.Mapping {
	if b.kernel == nil {
		b.kernel = &profile.Mapping{ID: uint64(len(b.p.Mapping) + 1), File: KernelFile, Start: ^uint64(0),
			HasFunctions: true}
		b.p.Mapping = append(b.p.Mapping, b.kernel)
	}
	return b.kernel
}

func (b *Builder) mapping(m *Mapping) *profile.Mapping {
	if m == nil {
		return nil
	}
	pm := b.maps[*m]
	if pm == nil {
		pm = &profile.Mapping{ID: uint64(len(b.p.Mapping) + 1), Start: m.Start, Limit: m.Limit, Offset: m.Offset,
			File: m.File, BuildID: m.BuildID}
		b.maps[*m] = pm
		b.p.Mapping = append(b.p.Mapping, pm)
	}
	return pm
}

func (b *Builder) function(l Line) *profile.Function {
	k := Line{Func: l.Func, File: l.File}
	f := b.funcs[k]
	if f == nil {
		f = &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: l.Func, SystemName: l.Func, Filename: l.File}
		b.funcs[k] = f
		b.p.Function = append(b.p.Function, f)
	}
	return f
}

func (b *Builder) location(pm *profile.Mapping, fr *Frame) *profile.Location {
	k := locKey{pm, fr.Addr}
	loc := b.locs[k]
	if loc != nil {
		return loc
	}
	loc = &profile.Location{ID: uint64(len(b.p.Location) + 1), Mapping: pm, Address: fr.Addr}
	for _, l := range fr.Lines {
		loc.Line = append(loc.Line, profile.Line{Function: b.function(l), Line: int64(l.Line)})
	}
	if pm != nil && len(fr.Lines) > 0 {
		pm.HasFunctions = true
		for _, l := range fr.Lines {
			pm.HasFilenames = pm.HasFilenames || l.File != ""
			pm.HasLineNumbers = pm.HasLineNumbers || l.Line > 0
		}
		pm.HasInlineFrames = pm.HasInlineFrames || len(fr.Lines) > 1
	}
	b.locs[k] = loc
	b.p.Location = append(b.p.Location, loc)
	return loc
}

// Add counts count samples of a stack: kernel frames (innermost first,
// each an address and its function's name) then user frames (innermost
// first). Labels (pid) are attached to the sample.
func (b *Builder) Add(count uint64, kernel []Frame, user []Frame, pid int) {
	var locs []*profile.Location
	for i := range kernel {
		km := b.kernelMap()
		km.Start = min(km.Start, kernel[i].Addr)
		km.Limit = max(km.Limit, kernel[i].Addr+1)
		locs = append(locs, b.location(km, &kernel[i]))
	}
	for i := range user {
		locs = append(locs, b.location(b.mapping(user[i].Map), &user[i]))
	}
	if len(locs) == 0 || count == 0 {
		return
	}
	key := make([]byte, 0, 8*len(locs)+8)
	for _, l := range locs {
		key = appendUint(key, l.ID)
	}
	key = appendUint(key, uint64(pid))
	s := b.samples[string(key)]
	if s == nil {
		s = &profile.Sample{Location: locs, Value: []int64{0, 0}}
		if pid > 0 {
			s.NumLabel = map[string][]int64{"pid": {int64(pid)}}
		}
		b.samples[string(key)] = s
		b.p.Sample = append(b.p.Sample, s)
	}
	s.Value[0] += int64(count)
	s.Value[1] += int64(count) * b.p.Period
}

func appendUint(b []byte, v uint64) []byte {
	for range 8 {
		b = append(b, byte(v))
		v >>= 8
	}
	return b
}

// Profile returns the profile, checked.
func (b *Builder) Profile() (*profile.Profile, error) {
	if b.kernel != nil && b.kernel.Start > b.kernel.Limit {
		b.kernel.Start = 0
	}
	return b.p, b.p.CheckValid()
}

// Write writes the profile gzipped, as pprof reads it.
func (b *Builder) Write(w io.Writer) error {
	p, err := b.Profile()
	if err != nil {
		return err
	}
	return p.Write(w)
}
