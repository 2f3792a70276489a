package simdev

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/rayd-go/rayd/shard"
)

// event is the completion handle of one simulated operation: done closes
// when it has run; at is its modelled completion time.
type event struct {
	done chan struct{}
	err  error
	at   time.Duration
}

// Wait blocks until the operation has run and returns its error (or the
// error of a dependency it inherited).
func (e *event) Wait() error {
	<-e.done
	return e.err
}

// queue is one simulated stream: operations run one after another, each on
// its own goroutine once its predecessor and its dependencies completed.
// Its modelled time is booked on eng, the device engine it runs on.
type queue struct {
	c    *Cluster
	eng  *engine
	mu   sync.Mutex
	tail *event
}

// enqueue schedules fn after the queue's previous operation and after deps,
// and returns its event. Its modelled start is the latest of the virtual
// host time, the engine's free time and the dependencies' completions; it
// lasts dur. A failed dependency fails the operation with the same error
// without running fn; inject, when non-nil, fails it after fn ran.
func (q *queue) enqueue(deps []shard.Event, dur time.Duration, inject error, fn func() error) *event {
	ev := &event{done: make(chan struct{})}
	q.mu.Lock()
	prev := q.tail
	q.tail = ev
	start := q.c.now()
	for _, d := range deps {
		if se, ok := d.(*event); ok && se != nil {
			start = max(start, se.at)
		}
	}
	ev.at = q.eng.reserve(start, dur)
	q.mu.Unlock()
	q.c.advance(ev.at)
	go func() {
		defer close(ev.done)
		if prev != nil {
			<-prev.done
		}
		for _, d := range deps {
			if d == nil {
				continue
			}
			if se, ok := d.(*event); ok && se == nil {
				continue
			}
			if err := d.Wait(); err != nil {
				ev.err = err
				return
			}
		}
		ev.err = fn()
		if ev.err == nil {
			ev.err = inject
		}
	}()
	return ev
}

// payload is simulated device memory: a value and the replica it lives on.
type payload struct {
	owner    *Replica
	v        any // written by the producing operation, read after its event
	lo, hi   int // the rows (lanes) it covers, for the modelled gather size
	released atomic.Bool
}

// Release marks the payload free; the value stays reachable for work that
// was already enqueued (a stream-ordered free).
func (p *payload) Release() {
	if p.released.CompareAndSwap(false, true) {
		p.owner.c.live.Add(-1)
	}
}

func (r *Replica) newPayload(lo, hi int) *payload {
	r.c.live.Add(1)
	return &payload{owner: r, lo: lo, hi: hi}
}
