package runner

import (
	"io"
	"time"

	"github.com/binscope/binscope/pprof"
	"github.com/binscope/binscope/stack"
)

// writePprof writes the profile's stacks to path as a pprof protobuf:
// user frames placed in their mappings with their inline expansions as
// the Lines of one Location, kernel frames in the [kernel] mapping.
func writePprof(path string, prof Profiler, sym *stack.Symbolizer, hz int, start time.Time, d time.Duration) error {
	raw, err := prof.RawStacks()
	if err != nil {
		return err
	}
	b := pprof.NewBuilder(hz, start, d)
	maps := map[*stack.Mapping]*pprof.Mapping{}
	var kernel, user []pprof.Frame
	for _, r := range raw {
		kernel, user = kernel[:0], user[:0]
		for _, ip := range r.Kernel {
			fr := pprof.Frame{Addr: ip}
			if name, _, ok := sym.KernelSymbol(ip); ok {
				fr.Lines = []pprof.Line{{Func: name}}
			}
			kernel = append(kernel, fr)
		}
		ms := prof.Mappings(r.Pid)
		for _, loc := range sym.LocateStack(ms, r.User) {
			fr := pprof.Frame{Addr: loc.Addr}
			if loc.Map != nil {
				pm := maps[loc.Map]
				if pm == nil {
					pm = &pprof.Mapping{Start: loc.Map.Start, Limit: loc.Map.End, Offset: loc.Map.Offset, File: loc.Map.Path, BuildID: loc.BuildID}
					maps[loc.Map] = pm
				}
				fr.Map = pm
			}
			for _, l := range loc.Lines {
				fr.Lines = append(fr.Lines, pprof.Line{Func: l.Func, File: l.File, Line: l.Line})
			}
			user = append(user, fr)
		}
		b.Add(r.Count, kernel, user, r.Pid)
	}
	if len(raw) > 0 {
		b.SetKernel(stack.KernelBuildID())
	}
	return writeFile(path, func(w io.Writer) error { return b.Write(w) })
}
