package dist

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/launch"
)

// operand is one checked collective buffer.
type operand struct {
	ptr   driver.DevicePtr
	count uint64
	dt    driver.NCCLDataType
	bytes int64
}

// operands checks that every buffer lives on the communicator's device and
// has an NCCL element type; empty buffers are skipped.
func (c *Comm) operands(bufs []Buffer) ([]operand, error) {
	out := make([]operand, 0, len(bufs))
	for i, b := range bufs {
		if b == nil {
			return nil, fmt.Errorf("dist: buffer %d is nil", i)
		}
		var dt driver.NCCLDataType
		var size int64
		switch b.(type) {
		case *launch.Buffer[int8]:
			dt, size = driver.NCCLInt8, 1
		case *launch.Buffer[uint8]:
			dt, size = driver.NCCLUint8, 1
		case *launch.Buffer[int32]:
			dt, size = driver.NCCLInt32, 4
		case *launch.Buffer[uint32]:
			dt, size = driver.NCCLUint32, 4
		case *launch.Buffer[int64]:
			dt, size = driver.NCCLInt64, 8
		case *launch.Buffer[uint64]:
			dt, size = driver.NCCLUint64, 8
		case *launch.Buffer[float32]:
			dt, size = driver.NCCLFloat32, 4
		case *launch.Buffer[float64]:
			dt, size = driver.NCCLFloat64, 8
		default:
			return nil, fmt.Errorf("dist: buffer %d: %T has no NCCL element type", i, b)
		}
		if d := b.Device(); d == nil || d.Ordinal() != c.ordinal {
			return nil, fmt.Errorf("dist: buffer %d is on %v, the communicator on cuda:%d", i, d, c.ordinal)
		}
		if b.Len() == 0 {
			continue
		}
		out = append(out, operand{ptr: driver.DevicePtr(b.Addr()), count: uint64(b.Len()), dt: dt, bytes: int64(b.Len()) * size})
	}
	return out, nil
}

// AllReduce reduces every buffer in place over all ranks with op (one NCCL
// group when there are several) and returns when the results are in the
// buffers, identical on every rank. The work that wrote the buffers must
// have completed (synchronize its stream first). Every rank must call
// AllReduce with the same op and buffer shapes, in the same order.
//
// A peer that dies, aborts or stalls makes AllReduce fail within the
// timeout instead of hanging: while it waits it polls the stream, NCCL's
// asynchronous error state and the session, and on any failure it aborts
// the communicator (every later call fails with the same error).
func (c *Comm) AllReduce(ctx context.Context, op Op, bufs ...Buffer) error {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	if err := c.usable(); err != nil {
		return err
	}
	ops, err := c.operands(bufs)
	if err != nil || len(ops) == 0 {
		return err
	}
	deadline := c.deadline(ctx)
	if err := c.guard(ctx, deadline, "ncclAllReduce", func() error { return c.enqueue(op, ops, 1) }); err != nil {
		return err
	}
	return c.wait(ctx, deadline, "all-reduce")
}

// enqueue issues repeat rounds of all-reduces of ops on the stream (the
// context is current).
func (c *Comm) enqueue(op Op, ops []operand, repeat int) error {
	group := len(ops) > 1
	for range repeat {
		if group {
			if err := driver.NCCLGroupStart(); err != nil {
				return err
			}
		}
		for _, o := range ops {
			if err := c.nccl.AllReduce(o.ptr, o.ptr, o.count, o.dt, driver.NCCLRedOp(op), c.stream); err != nil {
				if group {
					_ = driver.NCCLGroupEnd()
				}
				return err
			}
		}
		if group {
			if err := driver.NCCLGroupEnd(); err != nil {
				return err
			}
		}
	}
	return nil
}

// wait polls the stream until the queued work completes, aborting on an
// NCCL error, a lost peer, ctx's end or the deadline.
func (c *Comm) wait(ctx context.Context, deadline time.Time, what string) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	fail := func(err error) error {
		c.abort(err)
		return err
	}
	if err := c.cu.SetCurrent(); err != nil {
		return fail(err)
	}
	pause := 10 * time.Microsecond
	for spin := 0; ; spin++ {
		done, err := c.stream.Query()
		if err != nil {
			return fail(fmt.Errorf("dist: %s: %w", what, err))
		}
		if done {
			return nil
		}
		code, err := c.nccl.AsyncError()
		if err != nil {
			return fail(fmt.Errorf("dist: %s: %w", what, err))
		}
		if code != driver.NCCLSuccess && code != driver.NCCLInProgress {
			return fail(fmt.Errorf("dist: %s: %w (%s)", what, &driver.NCCLError{Func: "ncclCommGetAsyncError", Code: code},
				driver.NCCLErrorString(code)))
		}
		select {
		case <-c.sessionFailed():
			return fail(fmt.Errorf("dist: %s: %w", what, c.sess.Err()))
		case <-ctx.Done():
			return fail(timeoutCause(ctx, fmt.Sprintf("%s on rank %d did not complete in time (a peer is dead or stalled)", what, c.env.Rank)))
		default:
		}
		if time.Now().After(deadline) {
			return fail(fmt.Errorf("%w: %s on rank %d did not complete in time (a peer is dead or stalled)", ErrTimeout, what, c.env.Rank))
		}
		if spin < 200 {
			runtime.Gosched()
			continue
		}
		time.Sleep(pause)
		pause = min(2*pause, time.Millisecond)
	}
}

// AllReduceTiming is one all-reduce measurement.
type AllReduceTiming struct {
	Bytes   int64   // bytes reduced per operation
	Iters   int     // timed operations
	Seconds float64 // device time per operation
	// AlgBW is Bytes/Seconds in GB/s; BusBW scales it by 2(W−1)/W, the
	// traffic of a ring all-reduce (nccl-tests' convention).
	AlgBW, BusBW float64
}

// MeasureAllReduce times iters back-to-back in-place SUM all-reduces of b
// (after two untimed ones) with CUDA events on the communicator's stream.
// b's contents are overwritten. Every rank must call it with the same
// shape and iters.
func (c *Comm) MeasureAllReduce(ctx context.Context, b Buffer, iters int) (AllReduceTiming, error) {
	if iters < 1 {
		return AllReduceTiming{}, fmt.Errorf("dist: MeasureAllReduce: %d iterations", iters)
	}
	if err := c.AllReduce(ctx, Sum, b); err != nil {
		return AllReduceTiming{}, err
	}
	c.opMu.Lock()
	defer c.opMu.Unlock()
	ops, err := c.operands([]Buffer{b})
	if err != nil || len(ops) == 0 {
		return AllReduceTiming{}, fmt.Errorf("dist: MeasureAllReduce: empty buffer (%v)", err)
	}
	var start, end driver.Event
	err = c.onDevice(func() error {
		var e error
		if start, e = driver.NewEvent(c.ordinal, driver.EventDefault); e != nil {
			return e
		}
		end, e = driver.NewEvent(c.ordinal, driver.EventDefault)
		return e
	})
	if err != nil {
		return AllReduceTiming{}, err
	}
	defer func() { _ = c.onDevice(func() error { _ = start.Destroy(); return end.Destroy() }) }()
	deadline := c.deadline(ctx)
	err = c.guard(ctx, deadline, "ncclAllReduce", func() error {
		if e := c.enqueue(Sum, ops, 1); e != nil {
			return e
		}
		if e := start.Record(c.stream); e != nil {
			return e
		}
		if e := c.enqueue(Sum, ops, iters); e != nil {
			return e
		}
		return end.Record(c.stream)
	})
	if err == nil {
		err = c.wait(ctx, deadline, "all-reduce")
	}
	if err != nil {
		return AllReduceTiming{}, err
	}
	var ms float32
	if err := c.onDevice(func() error { var e error; ms, e = driver.Elapsed(start, end); return e }); err != nil {
		return AllReduceTiming{}, err
	}
	t := AllReduceTiming{Bytes: ops[0].bytes, Iters: iters, Seconds: float64(ms) / 1e3 / float64(iters)}
	if t.Seconds > 0 {
		t.AlgBW = float64(t.Bytes) / t.Seconds / 1e9
		t.BusBW = t.AlgBW * 2 * float64(c.env.WorldSize-1) / float64(c.env.WorldSize)
	}
	return t, nil
}
