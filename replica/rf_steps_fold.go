package replica

import (
	"errors"
	"fmt"
	"sync"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

// The Fold, Gather and Result steps of the RF tasks (see rf_steps.go).

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
