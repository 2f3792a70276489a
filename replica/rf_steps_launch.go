package replica

import (
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

// The Launch step of the RF tasks (see rf_steps.go).

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
