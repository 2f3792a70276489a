package launch

import (
	"cmp"
	"slices"
	"sync"
)

// moduleLogSize bounds the process-wide record of module loads: a process
// that opens and closes devices many times keeps only the latest loads.
const moduleLogSize = 256

// moduleLog is the process-wide record of module loads, oldest first.
var moduleLog struct {
	mu     sync.Mutex
	seq    uint64
	recent []ModuleLoad
}

// recordLoad numbers l and appends it to the process-wide record.
func recordLoad(l *ModuleLoad) {
	moduleLog.mu.Lock()
	defer moduleLog.mu.Unlock()
	moduleLog.seq++
	l.Seq = moduleLog.seq
	if len(moduleLog.recent) == moduleLogSize {
		moduleLog.recent = slices.Delete(moduleLog.recent, 0, 1)
	}
	moduleLog.recent = append(moduleLog.recent, *l)
}

// ModuleLoadSeq returns the sequence number of the latest module load in
// this process (0 before any): pass it to ModuleLoadsSince to see what a
// piece of work loaded.
func ModuleLoadSeq() uint64 {
	moduleLog.mu.Lock()
	defer moduleLog.mu.Unlock()
	return moduleLog.seq
}

// ModuleLoadsSince returns the module loads of this process, on every
// device, numbered after seq, in load order: for example the modules a
// first NewScene loaded, and whether each came from a cubin or the PTX.
// Only the latest 256 loads are kept.
func ModuleLoadsSince(seq uint64) []ModuleLoad {
	moduleLog.mu.Lock()
	defer moduleLog.mu.Unlock()
	var out []ModuleLoad
	for _, l := range moduleLog.recent {
		if l.Seq > seq {
			out = append(out, l)
		}
	}
	return out
}

// sortLoads orders loads by sequence number.
func sortLoads(ls []ModuleLoad) {
	slices.SortFunc(ls, func(a, b ModuleLoad) int { return cmp.Compare(a.Seq, b.Seq) })
}
