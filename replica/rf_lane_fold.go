package replica

import (
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// FoldLanes implements shard.ResidentLanes on the master: compute waits for
// the remotes' partials and folds them into the master's own in the order
// given (see rf_lanes.go), then one download brings the total to the host,
// where it is decoded into package rf's result.
func (r *Replica) FoldLanes(t shard.Task, parts []shard.Payload, ready []shard.Event) (any, error) {
	st, err := r.current(t)
	if err != nil {
		return nil, err
	}
	if !r.isMaster {
		return nil, errors.New("replica: FoldLanes is called on the master only")
	}
	if len(parts) != len(ready) {
		return nil, fmt.Errorf("replica: %d partials with %d events", len(parts), len(ready))
	}
	s, j := r.compute, st.job
	srcs := make([]accel.PartialAddr, max(len(parts), 1))
	rays := st.rays
	for i, p := range parts {
		lp, ok := p.(*lanePart)
		switch {
		case !ok || lp == nil:
			return nil, fmt.Errorf("replica: partial %T is not a CUDA replica's", p)
		case lp.st == st || lp.st.r.master != r.dev || !lp.st.held.Load() || lp.job != lp.st.job || lp.job.task != t:
			return nil, fmt.Errorf("replica: partial %d is not a remote's partial of this call", i)
		case lp.shape != j.shape:
			return nil, fmt.Errorf("replica: partial %d has shape %+v, the call %+v", i, lp.shape, j.shape)
		}
		if err := waitLane(s, ready[i]); err != nil {
			return nil, err
		}
		if srcs[i], err = st.readable(s, lp.st); err != nil {
			return nil, fmt.Errorf("replica: gathering the partial of cuda:%d: %w", lp.st.r.Device(), err)
		}
		rays += lp.rays
	}
	for i, src := range srcs {
		var out *launch.Buffer[uint32]
		if i == len(srcs)-1 {
			out = st.out
		}
		if err := accel.FoldPartial(s, st.part, src, j.shape, out); err != nil {
			return nil, fmt.Errorf("replica: folding partial %d on cuda:%d: %w", i, r.Device(), err)
		}
	}
	words := st.host[:j.shape.Words()]
	if err := st.out.Download(s, words); err != nil {
		return nil, fmt.Errorf("replica: downloading the folded %s on cuda:%d: %w", t.Op().Key, r.Device(), err)
	}
	r.stats.downloaded.Add(int64(4 * len(words)))
	switch {
	case j.direct != nil:
		return accel.DecodeDfrAccumWords(words, j.direct.Grid.Res0, j.direct.Grid.Res1), nil
	case j.coherent != nil:
		return accel.DecodeDfrCoherentWords(words, j.coherent.Grid.Res0, j.coherent.Grid.Res1), nil
	}
	return accel.DecodeReflAccumWords(words, rays, j.refl.MaxBounces, j.refl.Grid), nil
}

// waitLane makes later work on s wait for ev: a remote's done event
// becomes a stream wait, nil is complete, any other event is waited for
// on the host.
func waitLane(s *launch.Stream, ev shard.Event) error {
	switch e := ev.(type) {
	case nil:
		return nil
	case *laneEvent:
		if e == nil {
			return nil
		}
		return s.Wait(e.e)
	}
	return ev.Wait()
}

// readable returns where the master's kernels read the remote's partial:
// in place on the master's own device or through peer access, else (no
// peer access: AllowNoPeerAccess) in a copy on the master queued on s (a
// peer copy the driver stages through the host).
func (st *laneState) readable(s *launch.Stream, remote *laneState) (accel.PartialAddr, error) {
	if remote.r.dev == st.r.dev {
		return remote.part.Addr(), nil
	}
	if remote.peer == 0 {
		remote.peer = -1
		m, d := st.r.Device(), remote.r.Device()
		there, err := launch.CanAccessPeer(m, d)
		if err != nil {
			return accel.PartialAddr{}, err
		}
		back, err := launch.CanAccessPeer(d, m)
		if err != nil {
			return accel.PartialAddr{}, err
		}
		if there && back {
			remote.peer = 1
		}
	}
	if remote.peer > 0 {
		return remote.part.Addr(), nil
	}
	shape := remote.job.shape
	if err := growPartial(s, &remote.mirror, shape); err != nil {
		return accel.PartialAddr{}, err
	}
	if err := copyPrefix(s, remote.mirror.Acc, remote.part.Acc, shape.Acc); err != nil {
		return accel.PartialAddr{}, err
	}
	if err := copyPrefix(s, remote.mirror.Ints, remote.part.Ints, shape.Ints); err != nil {
		return accel.PartialAddr{}, err
	}
	st.r.stats.gathered.Add(int64(8*shape.Acc + 4*shape.Ints))
	return remote.mirror.Addr(), nil
}

// copyPrefix queues the copy of the first n elements of src into dst on s.
func copyPrefix[T launch.Elem](s *launch.Stream, dst, src *launch.Buffer[T], n int) error {
	if n == 0 {
		return nil
	}
	d, err := dst.View(0, n)
	if err != nil {
		return err
	}
	v, err := src.View(0, n)
	if err != nil {
		return err
	}
	return d.CopyFrom(s, v)
}
