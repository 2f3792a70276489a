package replica

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// event is the shard.Event of a step: a CUDA event recorded on the stream
// that ran it. The next step makes its own stream wait on it
// (cuStreamWaitEvent); Wait blocks the host (cuEventSynchronize).
//
// The CUDA event comes from its device's pool and goes back there once the
// wrapper is unreachable: a wait already enqueued on it keeps the state it
// captured, so recycling is safe as soon as no Go code can name it, and the
// layer never has to say when it is done with an event.
type event struct {
	e *launch.Event
}

// Wait blocks until the recorded work has completed and returns its
// failure, if any.
func (e *event) Wait() error {
	err := e.e.Synchronize()
	runtime.KeepAlive(e)
	return err
}

// enqueueOn makes later work on s wait for e.
func (e *event) enqueueOn(s *launch.Stream) error {
	err := s.Wait(e.e)
	runtime.KeepAlive(e)
	return err
}

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

// eventPool recycles the CUDA events of one device.
type eventPool struct {
	d      *launch.Device
	mu     sync.Mutex
	free   []*launch.Event
	closed bool
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
	}
	if err := e.Record(s); err != nil {
		p.put(e)
		return nil, err
	}
	ev := &event{e: e}
	runtime.AddCleanup(ev, p.put, e)
	return ev, nil
}

// put returns an event to the pool, or destroys it once the pool is closed.
func (p *eventPool) put(e *launch.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = e.Close()
		return
	}
	p.free = append(p.free, e)
}

// close destroys the pooled events; events still referenced are destroyed
// when they come back.
func (p *eventPool) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	var errs []error
	for _, e := range p.free {
		errs = append(errs, e.Close())
	}
	p.free = nil
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
