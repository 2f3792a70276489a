package shard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
)

// call is the per-call state shared by both executors: the replicas in
// layer order (a Shard's Replica indexes them), which were entered, and the
// exit edge.
type call struct {
	l       *Layer
	op      Op
	reps    []Replica
	master  Replica
	entry   Event
	entered []Replica
}

func (l *Layer) newCall(op Op, reps []Replica) *call {
	return &call{l: l, op: op, reps: reps, master: reps[0]}
}

func (c *call) fail(r Replica, stage string, lo, hi int, err error) error {
	return &ReplicaError{Device: r.Device(), Stage: stage, Operation: c.op.Key, Start: lo, Stop: hi, Err: err}
}

// enter starts the call on replica i (the master, 0, first) and returns
// it.
func (c *call) enter(i int) (Replica, error) {
	if i < 0 || i >= len(c.reps) {
		return nil, fmt.Errorf("shard: %s: no replica %d of %d", c.op.Key, i, len(c.reps))
	}
	r := c.reps[i]
	for _, e := range c.entered {
		if e == r {
			return r, nil
		}
	}
	if r != c.master && len(c.entered) == 0 {
		if _, err := c.enter(0); err != nil {
			return nil, err
		}
	}
	var arg Event
	if r != c.master {
		arg = c.entry
	}
	ev, err := r.Enter(arg)
	if err != nil {
		return nil, c.fail(r, "enter", 0, 0, err)
	}
	if r == c.master {
		c.entry = ev
	}
	c.entered = append(c.entered, r)
	return r, nil
}

// exit runs the exit edge of every entered device, always; a failure poisons
// the layer ("stream handoff") and is attached to the call's own error.
func (c *call) exit(err error) error {
	var first error
	for _, r := range c.entered {
		if e := r.Exit(); e != nil && first == nil {
			first = c.fail(r, "exit", 0, 0, e)
		}
	}
	if first != nil {
		return errJoin(err, errors.Join(first, c.l.poisonWith("stream handoff", first)))
	}
	return err
}

func cancelled(ctx context.Context, op string, i, n int) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("shard: %s cancelled at chunk boundary %d of %d: %w", op, i, n, err)
	}
	return nil
}

// flight is one chunk between its issue and its retirement.
type flight struct {
	c     Shard
	rep   Replica
	in    Payload
	inEv  Event
	out   Payload
	outEv Event
}

func (f *flight) release() {
	for _, p := range []Payload{f.in, f.out} {
		if p != nil {
			p.Release()
		}
	}
	f.in, f.out = nil, nil
}

// RunRows executes a per_ray task on the layer (spec §5, §6): it validates
// the task, plans it (PlanRows), records the dispatch and chunk plan, then
// per chunk in issue order scatters the inputs to the chunk's replica,
// launches there and gathers the outputs to the master, keeping up to
// Schedule.Depth chunks in flight; chunks retire in issue order, each either
// handed to Options.Offload (the call then returns the zero R) or kept and
// assembled in row order. A master dispatch returns the master's record
// itself. Cancellation of ctx is honoured at chunk boundaries (issue and
// retirement): no further chunk is issued or handed to the hook and the
// error wraps ctx.Err(). Neither cancellation, a hook error nor a replica
// error poisons the layer; a failed exit edge does.
func RunRows[R any](ctx context.Context, l *Layer, t RowTask[R]) (R, error) {
	var zero R
	n, err := t.Rows()
	if err != nil {
		return zero, err
	}
	op := t.Op()
	l.rw.RLock()
	defer l.rw.RUnlock()
	reps, err := l.ready()
	if err != nil {
		return zero, err
	}
	count := l.startCount()
	s, err := l.planRows(op, n, l.route(reps, t))
	if err != nil {
		return zero, err
	}
	rec := l.record(s)
	r := &rowRun[R]{call: l.newCall(op, reps), t: t, s: s, offload: l.opts.Offload}
	res, err := r.run(ctx)
	err = r.exit(err)
	l.counted(rec, count)
	return res, err
}

// route is the path of a per_ray call's remote rows: PathCopy with a
// chunking knob (the memory contract cuts and stages chunks) or when any
// remote is not a Router or answers PathCopy; PathCompact when every remote
// answers it; PathPeerDirect otherwise.
func (l *Layer) route(reps []Replica, t Task) Path {
	if l.chunked || len(reps) < 2 {
		return PathCopy
	}
	path := PathCompact
	for _, r := range reps[1:] {
		rt, ok := r.(Router)
		if !ok {
			return PathCopy
		}
		switch rt.Route(t, l.opts.Transfer) {
		case PathCompact:
		case PathPeerDirect:
			path = PathPeerDirect
		default:
			return PathCopy
		}
	}
	return path
}

type rowRun[R any] struct {
	*call
	t        RowTask[R]
	s        *Schedule
	offload  func(int, any) error
	inflight []*flight
	retired  int
	parts    []Part[R]
}

func (r *rowRun[R]) run(ctx context.Context) (res R, err error) {
	defer func() {
		for _, f := range r.inflight {
			f.release()
		}
	}()
	if _, err := r.enter(0); err != nil {
		return res, err
	}
	chunks := r.s.Chunks
	flights := make([]*flight, len(chunks))
	scatterFirst := r.s.Dispatch.Mode == ModeSharded
	if scatterFirst {
		for i := range chunks {
			if err := cancelled(ctx, r.op.Key, i, len(chunks)); err != nil {
				return res, err
			}
			if flights[i], err = r.scatter(chunks[i]); err != nil {
				return res, err
			}
			r.inflight = append(r.inflight, flights[i])
		}
	}
	for i, c := range chunks {
		if err := cancelled(ctx, r.op.Key, i, len(chunks)); err != nil {
			return res, err
		}
		if !scatterFirst {
			if flights[i], err = r.scatter(c); err != nil {
				return res, err
			}
			r.inflight = append(r.inflight, flights[i])
		}
		if err := r.launch(flights[i]); err != nil {
			return res, err
		}
		if r.s.Depth > 0 && len(r.inflight) > r.s.Depth {
			if err := r.retire(ctx); err != nil {
				return res, err
			}
		}
	}
	for len(r.inflight) > 0 {
		if err := r.retire(ctx); err != nil {
			return res, err
		}
	}
	switch {
	case r.offload != nil:
		return res, nil
	case len(r.parts) == 1 && r.parts[0].Start == 0 && r.parts[0].Stop == r.s.Dispatch.Rows:
		return r.parts[0].Record, nil // one launch covered the batch: its record is the result
	}
	slices.SortFunc(r.parts, func(a, b Part[R]) int { return cmp.Compare(a.Start, b.Start) })
	return r.t.Assemble(r.s.Dispatch.Rows, r.parts)
}

// scatter enters the chunk's device and enqueues the copy of its rows.
func (r *rowRun[R]) scatter(c Shard) (*flight, error) {
	rep, err := r.enter(c.Replica)
	if err != nil {
		return nil, err
	}
	f := &flight{c: c, rep: rep}
	if path := r.s.Dispatch.Path; path.Direct() && c.Replica != 0 {
		f.in, f.inEv, err = rep.(Router).ScatterDirect(r.t, c.Start, c.Stop, path)
	} else {
		f.in, f.inEv, err = rep.Scatter(r.t, c.Start, c.Stop)
	}
	if err != nil {
		return nil, r.fail(rep, "scatter", c.Start, c.Stop, err)
	}
	return f, nil
}

// launch enqueues the chunk's launch and the gather of its outputs.
func (r *rowRun[R]) launch(f *flight) error {
	out, ev, err := f.rep.Launch(r.t, f.in, f.c.Start, f.c.Stop, f.inEv)
	if err != nil {
		return r.fail(f.rep, "launch", f.c.Start, f.c.Stop, err)
	}
	f.in.Release() // stream-ordered: freed once the launch has read it
	f.in, f.inEv = nil, nil
	f.out, f.outEv = out, ev
	g, gev, err := f.rep.Gather(r.t, out, ev)
	if err != nil {
		return r.fail(f.rep, "gather", f.c.Start, f.c.Stop, err)
	}
	if g != out {
		out.Release()
	}
	f.out, f.outEv = g, gev
	return nil
}

// retire hands the oldest chunk out: to the hook or to the assembly.
func (r *rowRun[R]) retire(ctx context.Context) error {
	f := r.inflight[0]
	if err := cancelled(ctx, r.op.Key, r.retired, len(r.s.Chunks)); err != nil {
		return err
	}
	r.inflight = r.inflight[1:]
	r.retired++
	defer f.release()
	v, err := r.master.Result(r.t, f.out, f.outEv)
	if err != nil {
		return r.fail(f.rep, "result", f.c.Start, f.c.Stop, err)
	}
	rec, ok := v.(R)
	if !ok {
		return r.fail(f.rep, "result", f.c.Start, f.c.Stop, fmt.Errorf("result is %T, want %T", v, rec))
	}
	if f.c.Len() > 0 && r.s.Plan != nil {
		r.l.measured(r.s.Plan, r.t.RecordRowBytes(rec))
	}
	if r.offload != nil {
		if f.c.Len() == 0 {
			return nil // an empty batch never reaches the hook
		}
		if err := r.offload(f.c.Start, rec); err != nil {
			return fmt.Errorf("shard: %s: offload hook at row %d: %w", r.op.Key, f.c.Start, err)
		}
		return nil
	}
	r.parts = append(r.parts, Part[R]{Start: f.c.Start, Stop: f.c.Stop, Record: rec})
	return nil
}
