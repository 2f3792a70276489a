package replica

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

// The RF tasks of package shard on a CUDA replica (host inputs, host
// results):
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

// launchRF implements Launch for the RF tasks (see the package comment of
// this file): lanes, rows or transmitters [lo, hi) on compute after ready.
func (r *Replica) launchRF(j *rfJob, in shard.Payload, lo, hi int, ready shard.Event) (shard.Payload, shard.Event, error) {
	if err := r.live(); err != nil {
		return nil, nil, err
	}
	ip, err := rfInputsOf(in, r.dev.d)
	if err != nil {
		return nil, nil, err
	}
	if lo < 0 || hi < lo {
		return nil, nil, fmt.Errorf("replica: launch of [%d,%d)", lo, hi)
	}
	s := r.compute
	if err := waitOn(s, ready); err != nil {
		return nil, nil, err
	}
	var out, target *rfOut
	fresh := false
	if j.paths != nil || ip.acc == nil {
		if out, err = r.allocOut(j, s, r.dev.d, hi-lo); err != nil {
			return nil, nil, err
		}
		out.lo, out.hi, target, fresh = lo, hi, out, true
	} else {
		target = ip.acc
		out = &rfOut{rep: r, dev: r.dev.d, lo: lo, hi: hi, base: target, last: s}
	}
	err = r.runRF(j, s, ip, target, lo, hi, !fresh)
	ip.last = s // the launch is the inputs' latest use
	if err != nil {
		if fresh {
			out.Release()
		}
		return nil, nil, fmt.Errorf("replica: %s [%d,%d) on cuda:%d: %w", j.key(), lo, hi, r.Device(), err)
	}
	target.rays += hi - lo
	if fresh && j.paths == nil {
		ip.acc = out
	}
	ev, err := r.record(s)
	if err != nil {
		return nil, nil, err
	}
	r.stats.launches.Add(1)
	r.stats.rows.Add(int64(hi - lo))
	return out, ev, nil
}

// runRF queues the job's kernels for [lo, hi) into out on s.
func (r *Replica) runRF(j *rfJob, s *launch.Stream, ip *rfInputs, out *rfOut, lo, hi int, accumulate bool) error {
	switch {
	case j.direct != nil:
		t := j.direct
		return r.bvh.AccumDfrDirect(s, accel.DfrAccumLaunch{States: ip.states, NumStates: ip.numStates, Grid: t.Grid,
			Options: t.Window(lo, hi), Accumulate: accumulate}, accel.DfrAccumOut{Grids: out.grids, Counters: out.ints})
	case j.coherent != nil:
		t := j.coherent
		return r.bvh.AccumDfrCoherentDirect(s, accel.DfrCoherentLaunch{States: ip.states, NumStates: ip.numStates,
			Grid: t.Grid, Options: t.Window(lo, hi), Accumulate: accumulate}, accel.DfrCoherentOut{Grids: out.grids, Counts: out.ints})
	case j.refl != nil:
		return r.runReflections(j.refl, s, ip, out, lo, hi, accumulate)
	}
	t := j.paths
	txs, capacity := hi-lo, (hi-lo)*t.LanesPerTx()
	return r.bvh.TraceDfrPaths(s, accel.DfrPathsLaunch{States: ip.states, NumStates: ip.numStates, Rx: ip.rx,
		NumRx: len(t.Rx) / 3, NumTx: txs, TxPolarization: ip.pol, PolRows: ip.polRows, Wavelength: t.Options.Wavelength,
		Layout: rf.SourceLane, LaneCount: capacity}, accel.DfrPathsOut{Rows: out.words, Count: out.ints, Capacity: capacity})
}

// rayBufs are the uploaded rows of one reflection launch.
type rayBufs struct {
	o, d, tmax, tx, pol *launch.Buffer[float32]
	active              *launch.Buffer[uint8]
}

func (b *rayBufs) closeOn(s *launch.Stream) error {
	return errors.Join(b.o.CloseOn(s), b.d.CloseOn(s), b.tmax.CloseOn(s), b.tx.CloseOn(s), b.pol.CloseOn(s), b.active.CloseOn(s))
}

// runReflections uploads rows [lo, hi) on in and accumulates them on s
// after the upload; the rows are freed on s after the launch.
func (r *Replica) runReflections(t *shard.AccumulateReflections, s *launch.Stream, ip *rfInputs, out *rfOut, lo, hi int, accumulate bool) error {
	rays := t.Window(lo, hi)
	active := make([]uint8, len(rays.Active))
	for i, v := range rays.Active {
		if v {
			active[i] = 1
		}
	}
	var b rayBufs
	var err error
	b.o, err = upload(r.in, rays.O)
	if err == nil {
		b.d, err = upload(r.in, rays.D)
	}
	if err == nil {
		b.tmax, err = optUpload(r.in, rays.TMax)
	}
	if err == nil {
		b.tx, err = upload(r.in, rays.TxPosition)
	}
	if err == nil {
		b.pol, err = optUpload(r.in, rays.TxPolarization)
	}
	if err == nil {
		b.active, err = optUpload(r.in, active)
	}
	var uploaded *event
	if err == nil {
		uploaded, err = r.record(r.in)
	}
	if err == nil {
		err = uploaded.enqueueOn(s)
	}
	if err != nil {
		return errors.Join(err, b.closeOn(r.in))
	}
	r.stats.uploaded.Add(nbytes(b.o) + nbytes(b.d) + nbytes(b.tmax) + nbytes(b.tx) + nbytes(b.pol) + nbytes(b.active))
	err = r.bvh.AccumulateReflections(s, accel.ReflAccumLaunch{O: b.o, D: b.d, TMax: b.tmax, TxPosition: b.tx,
		TxPolarization: b.pol, Active: b.active, N: hi - lo, Material: ip.material, NumFaces: r.faces(), Grid: t.Grid,
		MaxBounces: t.MaxBounces, Options: t.Options, Accumulate: accumulate},
		accel.ReflAccumOut{Grids: out.grids, Counters: out.ints, Wedges: out.words})
	return errors.Join(err, b.closeOn(s))
}

// foldRF implements Fold for the RF grid tasks. A launch that added into
// acc (an alias of it) only orders: acc is ready when the launch is. Any
// other pair is downloaded and summed on the host, acc first.
func (r *Replica) foldRF(j *rfJob, acc shard.Payload, accReady shard.Event, part shard.Payload, partReady shard.Event) (shard.Payload, shard.Event, error) {
	if err := r.live(); err != nil {
		return nil, nil, err
	}
	if j.paths != nil {
		return nil, nil, fmt.Errorf("replica: %s blocks are placed, not folded: %w", j.key(), shard.ErrUnsupported)
	}
	if acc == nil {
		return part, partReady, nil
	}
	if po, ok := part.(*rfOut); ok && po.base != nil && po.base == acc {
		return acc, partReady, nil
	}
	av, err := r.rfValue(j, acc, accReady)
	if err != nil {
		return nil, nil, err
	}
	pv, err := r.rfValue(j, part, partReady)
	if err != nil {
		return nil, nil, err
	}
	if err := mergeRF(av, pv); err != nil {
		return nil, nil, err
	}
	if h, ok := acc.(*rfHost); ok {
		return h, nil, nil
	}
	return &rfHost{v: av}, nil, nil
}

// mergeRF adds the host partial part into acc.
func mergeRF(acc, part any) error {
	switch a := acc.(type) {
	case *rf.AccumResult:
		if p, ok := part.(*rf.AccumResult); ok {
			return shard.MergeAccum(a, p)
		}
	case *rf.CoherentResult:
		if p, ok := part.(*rf.CoherentResult); ok {
			return shard.MergeCoherent(a, p)
		}
	case *rf.ReflResult:
		if p, ok := part.(*rf.ReflResult); ok {
			return shard.MergeReflections(a, p)
		}
	}
	return fmt.Errorf("replica: cannot merge %T into %T", part, acc)
}

// gatherRF implements Gather for the RF tasks: on the master out and ready
// unchanged; a remote peer-copies its outputs on gather, after ready, into
// memory allocated on the master's recv stream for it.
func (r *Replica) gatherRF(j *rfJob, out shard.Payload, ready shard.Event) (shard.Payload, shard.Event, error) {
	if err := r.live(); err != nil {
		return nil, nil, err
	}
	if _, ok := out.(*rfHost); ok || r.isMaster {
		return out, ready, nil
	}
	p, err := r.rfOutOf(out)
	if err != nil {
		return nil, nil, err
	}
	s := r.gather
	dst, err := r.allocLike(j, p, r.recv, r.master.d)
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (shard.Payload, shard.Event, error) {
		dst.Release()
		return nil, nil, err
	}
	allocated, err := r.record(r.recv)
	if err != nil {
		return fail(err)
	}
	if err := allocated.enqueueOn(s); err != nil {
		return fail(err)
	}
	if err := waitOn(s, ready); err != nil {
		return fail(err)
	}
	if p.after != nil {
		if err := p.after.enqueueOn(s); err != nil {
			return fail(err)
		}
	}
	p.used(s) // the copy is the source's latest use: it is freed after it
	copyErr := errors.Join(copyBuf(s, dst.grids, p.grids), copyBuf(s, dst.ints, p.ints), copyBuf(s, dst.words, p.words))
	gathered, err := r.record(s)
	if err != nil {
		dst.owned = false // the copies cannot be ordered: leak rather than free under them
		return nil, nil, errors.Join(copyErr, err)
	}
	dst.after = gathered // the copy ran on this device: order the free after it
	if copyErr != nil {
		return fail(copyErr)
	}
	r.stats.gathered.Add(nbytes(dst.grids) + nbytes(dst.ints) + nbytes(dst.words))
	return dst, gathered, nil
}

// rfOutOf checks a device output handed back by the layer and resolves an
// alias to the partial it added into.
func (r *Replica) rfOutOf(p shard.Payload) (*rfOut, error) {
	o, ok := p.(*rfOut)
	switch {
	case !ok || o == nil:
		return nil, fmt.Errorf("replica: payload %T is not a CUDA replica's RF output", p)
	case o.base != nil:
		o = o.base
	}
	switch {
	case o.released.Load():
		return nil, errors.New("replica: payload used after release")
	case o.dev != r.dev.d && o.dev != r.master.d:
		return nil, fmt.Errorf("replica: payload on %v handed to cuda:%d", o.dev, r.Device())
	}
	return o, nil
}

// allocLike allocates buffers of p's sizes on s (a stream of dev).
func (r *Replica) allocLike(j *rfJob, p *rfOut, s *launch.Stream, dev *launch.Device) (*rfOut, error) {
	dst := &rfOut{rep: r, dev: dev, lo: p.lo, hi: p.hi, rays: p.rays, owned: true, last: s}
	var err error
	if p.grids != nil {
		dst.grids, err = launch.AllocAsync[float32](s, p.grids.Len())
	}
	if err == nil && p.ints != nil {
		dst.ints, err = launch.AllocAsync[int32](s, p.ints.Len())
	}
	if err == nil && p.words != nil {
		dst.words, err = launch.AllocAsync[uint32](s, p.words.Len())
	}
	if err != nil {
		dst.Release()
		return nil, fmt.Errorf("replica: allocating the gathered %s outputs on %v: %w", j.key(), dev, err)
	}
	return dst, nil
}

// nbytes is the size of b, 0 for a nil buffer.
func nbytes[T launch.Elem](b *launch.Buffer[T]) int64 {
	if b == nil {
		return 0
	}
	return int64(b.Bytes())
}

func copyBuf[T launch.Elem](s *launch.Stream, dst, src *launch.Buffer[T]) error {
	if dst == nil {
		return nil
	}
	return dst.CopyFrom(s, src)
}

// resultRF implements Result for the RF tasks (master only): the payload
// downloaded (after ready) and decoded into package rf's result.
func (r *Replica) resultRF(j *rfJob, p shard.Payload, ready shard.Event) (any, error) {
	if err := r.live(); err != nil {
		return nil, err
	}
	if !r.isMaster {
		return nil, errors.New("replica: Result is called on the master only")
	}
	return r.rfValue(j, p, ready)
}

// hostStream is the stream on which this replica downloads a payload of
// dev, and the lock that serialises its download sequences.
func (r *Replica) hostStream(dev *launch.Device) (*launch.Stream, *sync.Mutex, error) {
	switch {
	case dev == r.dev.d && r.isMaster:
		return r.result, &r.resultMu, nil
	case dev == r.dev.d:
		return r.gather, &r.resultMu, nil
	case dev == r.master.d:
		return r.recv, &r.resultMu, nil
	}
	return nil, nil, fmt.Errorf("replica: payload on %v cannot be read from cuda:%d", dev, r.Device())
}

// rfValue returns the host value of a payload: a host result as it is, a
// device output downloaded after ready and decoded (which waits on the host).
func (r *Replica) rfValue(j *rfJob, pl shard.Payload, ready shard.Event) (any, error) {
	if h, ok := pl.(*rfHost); ok {
		return h.v, nil
	}
	p, err := r.rfOutOf(pl)
	if err != nil {
		return nil, err
	}
	s, mu, err := r.hostStream(p.dev)
	if err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	if err := waitOn(s, ready); err != nil {
		return nil, err
	}
	if p.after != nil {
		if err := p.after.enqueueOn(s); err != nil {
			return nil, err
		}
	}
	p.used(s) // the downloads are the latest use: free after them
	g, i, w := j.outShape(p.hi - p.lo)
	if p.grids != nil {
		g = p.grids.Len()
	}
	grids, ints, words := make([]float32, g), make([]int32, i), make([]uint32, w)
	for _, e := range []error{download1(s, p.grids, grids), download1(s, p.ints, ints), download1(s, p.words, words)} {
		if e != nil {
			return nil, e
		}
	}
	r.stats.downloaded.Add(int64(4 * (len(grids) + len(ints) + len(words))))
	switch {
	case j.direct != nil:
		return accel.DecodeDfrAccum(grids, ints, j.direct.Grid.Res0, j.direct.Grid.Res1), nil
	case j.coherent != nil:
		return accel.DecodeDfrCoherent(grids, ints, j.coherent.Grid.Res0, j.coherent.Grid.Res1), nil
	case j.refl != nil:
		t := j.refl
		return accel.DecodeReflAccum(grids, ints, words, p.rays, t.MaxBounces, t.Grid, t.Options), nil
	}
	capacity := (p.hi - p.lo) * j.paths.LanesPerTx()
	return accel.DecodePaths(words, ints[0], capacity, rf.SourceLane), nil
}

// download1 copies the first len(dst) elements of b into dst after the work
// queued on s (nothing for an empty dst).
func download1[T launch.Elem](s *launch.Stream, b *launch.Buffer[T], dst []T) error {
	if len(dst) == 0 {
		return nil
	}
	if b == nil {
		return fmt.Errorf("replica: an RF output of %d elements is missing", len(dst))
	}
	return b.Download(s, dst)
}
