package accel

import (
	"fmt"
	"math"

	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/rf"
)

// DfrPathsLaunch is one trace_dfr_paths launch (spec §7.2) over the window
// [LaneOffset, LaneOffset+LaneCount) of the T·R·M lanes (lane g: state
// g mod M, receiver (g div M) mod R, transmitter (g div M) div R). Inputs
// must be validated by package rf (rf.TraceDfrPaths' rules).
type DfrPathsLaunch struct {
	States    *launch.Buffer[uint32] // M·DfrStateWords (PackDfrStates with the required active mask)
	NumStates int                    // M, the state limit
	Rx        *launch.Buffer[float32]
	NumRx     int // R
	NumTx     int // T
	// TxPolarization is nil (x̂), one broadcast row or NumTx rows of 3.
	TxPolarization *launch.Buffer[float32]
	PolRows        int // 0, 1 or NumTx
	Wavelength     float64
	Layout         rf.PathLayout
	LaneOffset     int
	LaneCount      int // ≥ 0
	// Accumulate keeps the rows and count already in the outputs; otherwise
	// the launcher first writes Capacity inert rows and a zero count.
	Accumulate bool
}

// DfrPathsOut holds the path rows (PathRowWords words each) and the int32
// count. With the SourceLane layout the rows must cover the whole lane
// space (row g for lane g, wherever the window lies); with Compact they are
// reserved from Count, so windows launched with Accumulate append (a row
// past Capacity is counted but dropped).
type DfrPathsOut struct {
	Rows     *launch.Buffer[uint32]
	Count    *launch.Buffer[int32]
	Capacity int // rows available in Rows
}

// TraceDfrPaths queues trace_dfr_paths on s.
func (b *BVH) TraceDfrPaths(s *launch.Stream, in DfrPathsLaunch, out DfrPathsOut) error {
	return b.traceDfrPaths(rfStream{s}, in, out)
}

func (b *BVH) traceDfrPaths(run rfRunner, in DfrPathsLaunch, out DfrPathsOut) error {
	total := int64(in.NumTx) * int64(in.NumRx) * int64(in.NumStates)
	switch {
	case in.NumTx < 0 || in.NumRx < 0 || in.NumStates < 0 || total > math.MaxInt32:
		return fmt.Errorf("accel: path lane space %d×%d×%d out of range", in.NumTx, in.NumRx, in.NumStates)
	case in.Layout != rf.Compact && in.Layout != rf.SourceLane:
		return fmt.Errorf("accel: path layout %d", in.Layout)
	case in.PolRows != 0 && in.PolRows != 1 && in.PolRows != in.NumTx:
		return fmt.Errorf("accel: %d polarization rows for %d transmitters", in.PolRows, in.NumTx)
	case in.PolRows > 0 && in.TxPolarization == nil:
		return fmt.Errorf("accel: TxPolarization is required for %d rows", in.PolRows)
	case out.Rows == nil || out.Count == nil || out.Capacity < 0:
		return fmt.Errorf("accel: TraceDfrPaths needs Rows and Count")
	}
	if err := checkWindow(in.LaneOffset, in.LaneCount, int(total)); err != nil {
		return err
	}
	if in.Layout == rf.SourceLane && out.Capacity < int(total) {
		return fmt.Errorf("accel: %d path rows, the SourceLane layout needs %d", out.Capacity, total)
	}
	for _, e := range []error{needLen("States", in.States, in.NumStates*DfrStateWords), needLen("Rx", in.Rx, 3*in.NumRx),
		needLen("TxPolarization", in.TxPolarization, 3*in.PolRows), needLen("Rows", out.Rows, PathRowWords*out.Capacity),
		needLen("Count", out.Count, 1)} {
		if e != nil {
			return e
		}
	}
	return b.launchDfrPaths(run, in, out)
}

// launchDfrPaths queues the launches of a checked trace_dfr_paths call.
func (b *BVH) launchDfrPaths(run rfRunner, in DfrPathsLaunch, out DfrPathsOut) error {
	if !in.Accumulate {
		if err := run.zero(out.Count); err != nil {
			return err
		}
		if out.Capacity > 0 {
			if err := run.launchShared(ModuleRFPaths, "rf_dfr_paths_init", launch.Blocks(min(out.Capacity, 1<<20), TraceThreads),
				launch.Threads(TraceThreads), 0, out.Rows, int32(out.Capacity)); err != nil {
				return err
			}
		}
	}
	if in.LaneCount == 0 {
		return nil
	}
	return run.launchShared(ModuleRFPaths, b.entry("rf_dfr_paths"), b.rfGrid(in.LaneCount), launch.Threads(TraceThreads), 0,
		b.nodes, b.tris, int32(b.numTris), in.States, int32(in.NumStates), in.Rx, int32(in.NumRx), int32(in.NumTx),
		nullable(in.TxPolarization), int32(in.PolRows), in.Wavelength, int32(in.Layout), int32(in.LaneOffset),
		int32(in.LaneCount), out.Rows, int32(out.Capacity), out.Count)
}

// DecodePaths converts downloaded path rows and count into an rf.DfrPaths of
// capacity rows (the host form of the device export).
func DecodePaths(rows []uint32, count int32, capacity int, layout rf.PathLayout) *rf.DfrPaths {
	p := rf.NewDfrPaths(capacity, layout)
	p.Count = count
	f := func(w uint32) float64 { return float64(math.Float32frombits(w)) }
	for i := range capacity {
		w := rows[i*PathRowWords : (i+1)*PathRowWords]
		p.Valid[i] = w[0] != 0
		p.TxID[i], p.RxID[i], p.Order[i] = int32(w[1]), int32(w[2]), int32(w[3])
		p.Edge0[i], p.Edge1[i], p.Edge2[i] = int32(w[4]), int32(w[5]), int32(w[6])
		p.Delay[i] = f(w[7])
		p.FieldXRe[i], p.FieldXIm[i] = f(w[8]), f(w[9])
		p.FieldYRe[i], p.FieldYIm[i] = f(w[10]), f(w[11])
		p.FieldZRe[i], p.FieldZIm[i] = f(w[12]), f(w[13])
		for k := range 3 {
			p.P0[3*i+k], p.P1[3*i+k], p.P2[3*i+k] = f(w[14+k]), f(w[17+k]), f(w[20+k])
		}
	}
	return p
}
