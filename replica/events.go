package replica

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// event is the shard.Event of a step: a CUDA event recorded on the stream
// that ran it. The next step makes its own stream wait on it
// (cuStreamWaitEvent); Wait blocks the host (cuEventSynchronize).
//
// The CUDA event comes from its device's pool and is valid until the call
// that recorded it exits: the pool takes every event recorded during calls
// back once no call of its Source is running (Source.enter and exit count
// them), so steady-state calls create no event. A wait already enqueued on
// an event keeps the state it captured, so re-recording it in a later call
// is safe; no event of this package outlives the call that recorded it.
type event struct {
	e *launch.Event
}

// Wait blocks until the recorded work has completed and returns its
// failure, if any.
func (e *event) Wait() error { return e.e.Synchronize() }

// enqueueOn makes later work on s wait for e.
func (e *event) enqueueOn(s *launch.Stream) error { return s.Wait(e.e) }

// waitOn makes later work on s wait for ev: a nil event is complete, one of
// this package's becomes a stream wait, and any other implementation is
// waited for on the host.
func waitOn(s *launch.Stream, ev shard.Event) error {
	switch e := ev.(type) {
	case nil:
		return nil
	case *event:
		if e == nil {
			return nil
		}
		return e.enqueueOn(s)
	}
	return ev.Wait()
}

// hostWait blocks until ev has completed (a nil event is complete).
func hostWait(ev shard.Event) error {
	if e, ok := ev.(*event); ev == nil || (ok && e == nil) {
		return nil
	}
	return ev.Wait()
}

// eventPool recycles the CUDA events of one device: record takes a free
// event (creating one only when none is free), and recycle returns every
// event recorded since the last recycle to the free list.
type eventPool struct {
	d       *launch.Device
	mu      sync.Mutex
	free    []*launch.Event
	used    []*launch.Event
	created atomic.Int64
	closed  bool
}

// record captures the work queued on s (a stream of the pool's device).
func (p *eventPool) record(s *launch.Stream) (*event, error) {
	p.mu.Lock()
	var e *launch.Event
	if n := len(p.free); n > 0 {
		e, p.free = p.free[n-1], p.free[:n-1]
	}
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("replica: %v: %w", p.d, launch.ErrClosed)
	}
	if e == nil {
		var err error
		if e, err = p.d.NewEvent(false); err != nil {
			return nil, err
		}
		p.created.Add(1)
	}
	err := e.Record(s)
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return nil, errors.Join(fmt.Errorf("replica: %v: %w", p.d, launch.ErrClosed), e.Close())
	case err != nil:
		p.free = append(p.free, e)
		return nil, err
	}
	p.used = append(p.used, e)
	return &event{e: e}, nil
}

// recycle makes every event recorded since the last recycle free again.
// The caller guarantees that no code still names one of them (no call of
// the Source is running).
func (p *eventPool) recycle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free = append(p.free, p.used...)
	clear(p.used)
	p.used = p.used[:0]
}

// close destroys the pool's events.
func (p *eventPool) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	var errs []error
	for _, e := range append(p.free, p.used...) {
		errs = append(errs, e.Close())
	}
	p.free, p.used = nil, nil
	return errors.Join(errs...)
}

// payload is the shard.Payload of a step: rows [lo, hi) of the call in
// columns on one device, owned (allocated in stream order by the replica)
// or views of the caller's buffers.
//
// last is the stream of the latest use enqueued so far, on the payload's
// device; every use is ordered after the previous one by an event, so
// freeing on last is freeing after the last use. after is set when that
// last use ran on another device's stream (a peer copy): last must then
// wait for it before the free.
type payload struct {
	rep    *Replica // the replica whose step produced it
	dev    *launch.Device
	cols   columns
	owned  bool
	lo, hi int

	last     *launch.Stream
	after    *event
	released atomic.Bool

	// path is set on the payloads of a remote's direct call
	// (PathPeerDirect, PathCompact): views of the caller's buffers on the
	// master, read and written in place.
	path shard.Path
	// in and compact are set on a compact launch's output: the input views
	// the expansion reads and the 16-byte records (a view of cols' block).
	in      columns
	compact *launch.Buffer[uint32]
}

func (p *payload) rows() int { return p.hi - p.lo }

// used records a use on s, which the caller has ordered after every earlier
// use of p.
func (p *payload) used(s *launch.Stream) {
	p.last, p.after = s, nil
}

// Release frees an owned payload in stream order after its last use; it
// never blocks the host. A failure is recorded and returned by the owning
// replica's next Exit. Idempotent.
func (p *payload) Release() {
	if p == nil || p.released.Swap(true) || !p.owned {
		return
	}
	if p.after != nil {
		if err := p.after.enqueueOn(p.last); err != nil {
			p.rep.note(fmt.Errorf("replica: ordering a free on %v: %w", p.dev, err))
			return // leak rather than free memory a copy may still read
		}
	}
	if err := p.cols.closeOn(p.last); err != nil {
		p.rep.note(fmt.Errorf("replica: freeing rows [%d,%d) on %v: %w", p.lo, p.hi, p.dev, err))
	}
}

// payloadOf checks that a payload handed back by the layer is one of this
// package's, still live and on device d.
func payloadOf(p shard.Payload, d *launch.Device) (*payload, error) {
	pp, ok := p.(*payload)
	switch {
	case !ok || pp == nil:
		return nil, fmt.Errorf("replica: payload %T is not a CUDA replica's", p)
	case pp.released.Load():
		return nil, errors.New("replica: payload used after release")
	case pp.dev != d:
		return nil, fmt.Errorf("replica: payload on %v handed to %v", pp.dev, d)
	}
	return pp, nil
}
