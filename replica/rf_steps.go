package replica

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

// The RF tasks of package shard on a CUDA replica through the steps of
// shard.Replica (host inputs, host results). A layer runs the grid_reduce
// tasks resident instead (shard.ResidentLanes, rf_lanes.go); these steps
// serve trace_dfr_paths, accumulate_reflections with wedge collection and
// any caller that drives the steps itself:
//
//   - accum_dfr_direct, accum_dfr_coherent_direct: Replicate packs the
//     states (accel.PackDfrStates, against the replica's own tables) and
//     uploads them on in; each Launch runs the lane window [lo, hi) on
//     compute. The first launch of a call on a device writes a fresh
//     partial; every later one adds into it (the kernels' Accumulate flag:
//     the in-place fold of spec §4.4, in ascending lane order because
//     compute runs launches in issue order), and Fold only orders.
//   - accumulate_reflections: Replicate uploads the packed face material;
//     each Launch uploads its rows on in and accumulates them on compute as
//     above.
//   - trace_dfr_paths: Scatter uploads the transmitter block's states,
//     receivers and polarization; Launch exports the block's SourceLane rows.
//
// A remote's partial (or block) is peer-copied to the master on its gather
// stream into memory allocated on the master's recv stream for it. The
// master downloads partials on its result stream when it folds them and
// sums them on the host in device order (package shard's merges), and
// downloads a path block when the layer retires it. Grids are float32 on
// the device, as on a single device; the host sums are float64.

// rfJob is an RF task of package shard as the replica runs it.
type rfJob struct {
	direct   *shard.AccumDfrDirect
	coherent *shard.AccumDfrCoherentDirect
	refl     *shard.AccumulateReflections
	paths    *shard.TraceDfrPaths
}

// rfJobOf returns the job of an RF task, or false for any other task.
func rfJobOf(t shard.Task) (*rfJob, bool) {
	switch t := t.(type) {
	case *shard.AccumDfrDirect:
		return &rfJob{direct: t}, t != nil
	case *shard.AccumDfrCoherentDirect:
		return &rfJob{coherent: t}, t != nil
	case *shard.AccumulateReflections:
		return &rfJob{refl: t}, t != nil
	case *shard.TraceDfrPaths:
		return &rfJob{paths: t}, t != nil
	}
	return nil, false
}

// key is the operation key of the job.
func (j *rfJob) key() string {
	switch {
	case j.direct != nil:
		return shard.OpAccumDfrDirect
	case j.coherent != nil:
		return shard.OpAccumDfrCoherentDirect
	case j.refl != nil:
		return shard.OpAccumulateReflections
	}
	return shard.OpTraceDfrPaths
}

// outShape is the element count of each output buffer of one partial (or of
// a path block of txs transmitters): float32 grids, int32 counters and
// uint32 rows (wedge events or path rows).
func (j *rfJob) outShape(txs int) (grids, ints, words int) {
	switch {
	case j.direct != nil:
		return 7 * j.direct.Grid.Cells(), 7, 0
	case j.coherent != nil:
		c := j.coherent.Grid.Cells()
		return 12 * c, 3 * c, 0
	case j.refl != nil:
		o := j.refl.Options
		if o.CollectWedges {
			words = o.WedgeCapacity * accel.WedgeEventWords
		}
		return 7 * j.refl.Grid.Res0 * j.refl.Grid.Res1, 2, words
	}
	return 0, 1, txs * j.paths.LanesPerTx() * accel.PathRowWords
}

// rfInputs is a call's inputs on one device: the packed states (the DFR
// accumulations and a path block), the packed material (reflections) and a
// path block's receivers and polarization. acc is the call's running
// partial on the device, which later launches add into.
type rfInputs struct {
	rep       *Replica
	dev       *launch.Device
	lo, hi    int
	states    *launch.Buffer[uint32]
	numStates int
	material  *launch.Buffer[float32]
	rx        *launch.Buffer[float32]
	pol       *launch.Buffer[float32]
	polRows   int
	acc       *rfOut
	last      *launch.Stream
	released  atomic.Bool
}

// Release frees the inputs in stream order after their last use.
func (p *rfInputs) Release() {
	if p == nil || p.released.Swap(true) {
		return
	}
	err := errors.Join(p.states.CloseOn(p.last), p.material.CloseOn(p.last), p.rx.CloseOn(p.last), p.pol.CloseOn(p.last))
	if err != nil {
		p.rep.note(fmt.Errorf("replica: freeing RF inputs on %v: %w", p.dev, err))
	}
}

// rfOut is device-resident output: a grid partial (grids, counters and, for
// collected wedges, event rows) or a path block (rows and count). An alias
// (base set) is a launch that added into base; it owns nothing. rays counts
// the reflection rows folded into a partial.
type rfOut struct {
	rep      *Replica
	dev      *launch.Device
	lo, hi   int
	rays     int
	grids    *launch.Buffer[float32]
	ints     *launch.Buffer[int32]
	words    *launch.Buffer[uint32]
	base     *rfOut
	owned    bool
	last     *launch.Stream
	after    *event
	released atomic.Bool
}

// used records a use on s, ordered after every earlier use.
func (p *rfOut) used(s *launch.Stream) { p.last, p.after = s, nil }

// Release frees owned buffers in stream order after their last use.
func (p *rfOut) Release() {
	if p == nil || p.released.Swap(true) || !p.owned {
		return
	}
	if p.after != nil {
		if err := p.after.enqueueOn(p.last); err != nil {
			p.rep.note(fmt.Errorf("replica: ordering a free on %v: %w", p.dev, err))
			return // leak rather than free memory a copy may still read
		}
	}
	if err := errors.Join(p.grids.CloseOn(p.last), p.ints.CloseOn(p.last), p.words.CloseOn(p.last)); err != nil {
		p.rep.note(fmt.Errorf("replica: freeing RF outputs on %v: %w", p.dev, err))
	}
}

// rfHost is a result already on the host (a merged partial).
type rfHost struct{ v any }

// Release implements shard.Payload; host memory needs no release.
func (*rfHost) Release() {}

// allocOut allocates the outputs of a partial (or a path block of txs
// transmitters) on s.
func (r *Replica) allocOut(j *rfJob, s *launch.Stream, dev *launch.Device, txs int) (*rfOut, error) {
	g, i, w := j.outShape(txs)
	p := &rfOut{rep: r, dev: dev, owned: true, last: s}
	var err error
	if g > 0 {
		p.grids, err = launch.AllocAsync[float32](s, g)
	}
	if err == nil {
		p.ints, err = launch.AllocAsync[int32](s, max(i, 1))
	}
	if err == nil && (w > 0 || j.paths != nil) {
		p.words, err = launch.AllocAsync[uint32](s, max(w, 1))
	}
	if err != nil {
		p.Release()
		return nil, fmt.Errorf("replica: allocating %s outputs on %v: %w", j.key(), dev, err)
	}
	return p, nil
}

// upload allocates a buffer of max(len(src), 1) elements on s and queues
// the copy of src into it.
func upload[T launch.Elem](s *launch.Stream, src []T) (*launch.Buffer[T], error) {
	b, err := launch.AllocAsync[T](s, max(len(src), 1))
	if err != nil {
		return nil, err
	}
	if len(src) > 0 {
		if err := b.Upload(s, src); err != nil {
			return nil, errors.Join(err, b.CloseOn(s))
		}
	}
	return b, nil
}

// optUpload is upload, or nil for an empty src.
func optUpload[T launch.Elem](s *launch.Stream, src []T) (*launch.Buffer[T], error) {
	if len(src) == 0 {
		return nil, nil
	}
	return upload(s, src)
}

// packStates packs the first n states against the replica's own tables.
func (r *Replica) packStates(st *rf.DfrStates, n int, m *rf.DfrMaterial, active []bool) []uint32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return accel.PackDfrStates(st, n, m, active, r.tables.NumFaces(), r.tables.Triangle)
}

func (r *Replica) faces() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tables.NumFaces()
}

// replicateRF implements Replicate for the grid_reduce RF tasks: the packed
// states or material, uploaded on in.
func (r *Replica) replicateRF(j *rfJob) (shard.Payload, shard.Event, error) {
	if err := r.live(); err != nil {
		return nil, nil, err
	}
	if (j.direct != nil && j.direct.States == nil) || (j.coherent != nil && j.coherent.States == nil) {
		return nil, nil, fmt.Errorf("replica: %s without states", j.key())
	}
	s := r.in
	p := &rfInputs{rep: r, dev: r.dev.d, last: s}
	var err error
	switch {
	case j.direct != nil:
		p.numStates = j.direct.States.StateCount()
		p.states, err = upload(s, r.packStates(j.direct.States, p.numStates, j.direct.Material, j.direct.Active))
	case j.coherent != nil:
		p.numStates = j.coherent.States.StateCount()
		p.states, err = upload(s, r.packStates(j.coherent.States, p.numStates, j.coherent.Material, j.coherent.Active))
	case j.refl != nil:
		p.material, err = upload(s, accel.PackFaceMaterial(j.refl.Material, r.faces()))
	default:
		return nil, nil, fmt.Errorf("replica: %s is scattered by transmitter block, not replicated: %w",
			j.key(), shard.ErrUnsupported)
	}
	return r.inputsReady(p, err)
}

// scatterRF implements Scatter for trace_dfr_paths: the states of the limit
// M (packed with the active mask), the receivers and the block's
// polarization, uploaded on in.
func (r *Replica) scatterRF(j *rfJob, lo, hi int) (shard.Payload, shard.Event, error) {
	if err := r.live(); err != nil {
		return nil, nil, err
	}
	t := j.paths
	if t == nil {
		return nil, nil, fmt.Errorf("replica: %s replicates its inputs, it is not scattered: %w", j.key(), shard.ErrUnsupported)
	}
	if t.States == nil {
		return nil, nil, fmt.Errorf("replica: %s without states", j.key())
	}
	if lo < 0 || hi < lo || 3*hi > len(t.Tx) {
		return nil, nil, fmt.Errorf("replica: scatter of transmitters [%d,%d) of %d", lo, hi, len(t.Tx)/3)
	}
	s := r.in
	blk := t.Slice(lo, hi)
	p := &rfInputs{rep: r, dev: r.dev.d, lo: lo, hi: hi, last: s, numStates: len(t.Active)}
	var err error
	p.states, err = upload(s, r.packStates(t.States, p.numStates, t.Material, t.Active))
	if err == nil {
		p.rx, err = upload(s, t.Rx)
	}
	if err == nil {
		p.pol, err = optUpload(s, blk.Options.TxPolarization)
		p.polRows = len(blk.Options.TxPolarization) / 3
	}
	return r.inputsReady(p, err)
}

// inputsReady records the uploads of p, or releases p after a failure.
func (r *Replica) inputsReady(p *rfInputs, err error) (shard.Payload, shard.Event, error) {
	var ev *event
	if err == nil {
		ev, err = r.record(p.last)
	}
	if err != nil {
		p.Release()
		return nil, nil, err
	}
	r.stats.uploaded.Add(nbytes(p.states) + nbytes(p.material) + nbytes(p.rx) + nbytes(p.pol))
	return p, ev, nil
}

// rfInputsOf checks a payload handed back by the layer.
func rfInputsOf(p shard.Payload, d *launch.Device) (*rfInputs, error) {
	in, ok := p.(*rfInputs)
	switch {
	case !ok || in == nil:
		return nil, fmt.Errorf("replica: payload %T is not a CUDA replica's RF inputs", p)
	case in.released.Load():
		return nil, errors.New("replica: payload used after release")
	case in.dev != d:
		return nil, fmt.Errorf("replica: payload on %v handed to %v", in.dev, d)
	}
	return in, nil
}
