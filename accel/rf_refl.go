package accel

import (
	"fmt"
	"math"

	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/rf"
)

// ReflAccumLaunch is one accumulate_reflections launch (spec §7.1) over N
// device-resident rows. Inputs must be validated by package rf
// (rf.AccumulateReflections' rules); sizes are checked here.
type ReflAccumLaunch struct {
	O, D           *launch.Buffer[float32] // 3N each (D normalized on the device)
	TMax           *launch.Buffer[float32] // N or nil (first segment only; non-finite = 1e8)
	TxPosition     *launch.Buffer[float32] // 3N image-source seeds
	TxPolarization *launch.Buffer[float32] // 3N or nil (x̂)
	Active         *launch.Buffer[uint8]   // N or nil
	N              int
	// Material holds FaceMaterialWords float32 per scene face
	// (PackFaceMaterial), NumFaces rows.
	Material   *launch.Buffer[float32]
	NumFaces   int
	Grid       rf.AccumGrid
	MaxBounces int
	Options    rf.ReflOptions
	Accumulate bool // add to the outputs (grids, count, wedge count)
}

// ReflAccumOut is the device-resident AccumResult: Grids holds the seven
// float32 grids (power, field x re, x im, y re, y im, z re, z im; cells each),
// Counters the int32 reflection_count and wedge event count, Wedges (when
// Options.CollectWedges) Options.WedgeCapacity rows of WedgeEventWords
// words. Wedge rows past the count are left as they were; their order is
// the device's (nondeterministic).
type ReflAccumOut struct {
	Grids    *launch.Buffer[float32]
	Counters *launch.Buffer[int32]
	Wedges   *launch.Buffer[uint32]
}

// AccumulateReflections queues accumulate_reflections on s: every active row
// follows its specular chain for up to MaxBounces reflections and commits
// each grid-plane crossing to the grids, summed in float64 and added to the
// float32 outputs.
func (b *BVH) AccumulateReflections(s *launch.Stream, in ReflAccumLaunch, out ReflAccumOut) error {
	return b.accumulateReflections(rfStream{s}, in, out)
}

func (b *BVH) accumulateReflections(run rfRunner, in ReflAccumLaunch, out ReflAccumOut) error {
	cells, err := checkReflAccum(in)
	if err != nil {
		return err
	}
	o := in.Options
	capacity := 0
	if o.CollectWedges {
		capacity = o.WedgeCapacity
	}
	switch {
	case out.Grids == nil || out.Counters == nil:
		return fmt.Errorf("accel: AccumulateReflections needs O, D, TxPosition, Material, Grids and Counters")
	case o.CollectWedges && o.WedgeCapacity > 0 && out.Wedges == nil:
		return fmt.Errorf("accel: AccumulateReflections: Wedges is required to collect %d events", o.WedgeCapacity)
	}
	for _, e := range []error{needLen("Grids", out.Grids, 7*cells), needLen("Counters", out.Counters, 2),
		needLen("Wedges", out.Wedges, WedgeEventWords*capacity)} {
		if e != nil {
			return e
		}
	}
	return b.launchReflAccum(run, in, out, cells)
}

// checkReflAccum checks the inputs of an accumulate_reflections launch and
// returns the grid's cell count.
func checkReflAccum(in ReflAccumLaunch) (int, error) {
	g := in.Grid
	cells, err := checkGridShape(rf.DfrGrid{Axis: g.Axis, Res0: g.Res0, Res1: g.Res1})
	if err != nil {
		return 0, err
	}
	o := in.Options
	n := in.N
	switch {
	case n < 0 || n > math.MaxInt32-31:
		return 0, fmt.Errorf("accel: ray count %d out of range", n)
	case in.MaxBounces < 0 || in.NumFaces < 0:
		return 0, fmt.Errorf("accel: max bounces %d, faces %d", in.MaxBounces, in.NumFaces)
	case in.O == nil || in.D == nil || in.TxPosition == nil || in.Material == nil:
		return 0, fmt.Errorf("accel: AccumulateReflections needs O, D, TxPosition, Material, Grids and Counters")
	case o.WedgeCapacity < 0 || o.WedgeSampleStride <= 0:
		return 0, fmt.Errorf("accel: wedge capacity %d, stride %d", o.WedgeCapacity, o.WedgeSampleStride)
	}
	for _, e := range []error{needLen("O", in.O, 3*n), needLen("D", in.D, 3*n), needLen("TMax", in.TMax, n),
		needLen("TxPosition", in.TxPosition, 3*n), needLen("TxPolarization", in.TxPolarization, 3*n),
		needLen("Active", in.Active, n), needLen("Material", in.Material, FaceMaterialWords*in.NumFaces)} {
		if e != nil {
			return 0, e
		}
	}
	return cells, nil
}

// launchReflAccum queues the launches of a checked accumulate_reflections call.
func (b *BVH) launchReflAccum(run rfRunner, in ReflAccumLaunch, out ReflAccumOut, cells int) error {
	if !in.Accumulate {
		for _, z := range []error{run.zero(out.Grids), run.zero(out.Counters)} {
			if z != nil {
				return z
			}
		}
	}
	if in.N == 0 {
		return nil
	}
	args, shared := b.reflAccumArgs(in, out.Wedges, cells)
	return b.runAccum(run, []rfCall{{"rf_accum_reflections", in.N, args}}, 7*cells, shared, out.Counters, out.Grids)
}

// reflAccumArgs are the arguments of rf_accum_reflections before its
// accumulators (wedges receives the events when in.Options collects them).
func (b *BVH) reflAccumArgs(in ReflAccumLaunch, wedges *launch.Buffer[uint32], cells int) (args []any, shared uint32) {
	o, n, g := in.Options, in.N, in.Grid
	capacity := 0
	if o.CollectWedges {
		capacity = o.WedgeCapacity
	}
	flags := int32(0)
	if o.IncludeLOS {
		flags |= 1
	}
	if o.CollectWedges {
		flags |= 2
	}
	if o.CollectWedgePrefixes {
		flags |= 4
	}
	smem := 0
	if cells <= rfSmemReflCells {
		smem = cells
	}
	events := any(launch.Null)
	if capacity > 0 {
		events = wedges
	}
	args = []any{b.nodes, b.tris, int32(b.numTris), in.O, in.D, nullable(in.TMax), in.TxPosition,
		nullable(in.TxPolarization), nullable(in.Active), int32(n), in.Material, int32(in.NumFaces)}
	args = append(args, gridParams(rf.DfrGrid{Axis: g.Axis, Position: g.Position, Coord0Min: g.Coord0Min,
		Coord0Max: g.Coord0Max, Coord1Min: g.Coord1Min, Coord1Max: g.Coord1Max, Res0: g.Res0, Res1: g.Res1})...)
	args = append(args, o.Wavelength, o.SolidAnglePerRay, flags, int32(in.MaxBounces), int32(capacity),
		int32(o.WedgeSampleStride), events, int32(smem))
	return args, uint32(smem * rfWarps * 7 * 8)
}
