package dist

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/launch"
)

// Op is a reduction operation.
type Op int

// Reductions (NCCL's ncclRedOp_t).
const (
	Sum  Op = Op(driver.NCCLSum)
	Prod Op = Op(driver.NCCLProd)
	Max  Op = Op(driver.NCCLMax)
	Min  Op = Op(driver.NCCLMin)
	Avg  Op = Op(driver.NCCLAvg)
)

// Buffer is device memory a collective reads and writes: a
// *launch.Buffer[T] with T one of int8, uint8, int32, uint32, int64, uint64,
// float32, float64 (views included).
type Buffer interface {
	Addr() uint64
	Len() int
	Device() *launch.Device
}

// Options configures Init. The zero value is the default.
type Options struct {
	// PinDevice binds the communicator to CUDA ordinal Device; otherwise
	// the device is DeviceFor(LOCAL_RANK, visible devices).
	PinDevice bool
	Device    int
	// Timeout bounds the rendezvous, communicator setup, each collective and
	// Close (DefaultTimeout when 0).
	Timeout time.Duration
	// NoWatchdog stops the rendezvous connections from failing waits when a
	// peer disconnects: a dead peer is then detected only by NCCL's error
	// state or the timeout. For diagnosis and tests.
	NoWatchdog bool
	// OptiXCacheRoot is passed to PrepareProcess.
	OptiXCacheRoot string
}

// Comm is one rank's NCCL communicator with the job's Session: collectives
// on device buffers that fail — instead of hanging — within the timeout
// when a peer dies, and an abort or destroy on every way out. Methods are
// safe for concurrent use; collectives are serialised.
type Comm struct {
	env     Env
	ordinal int
	timeout time.Duration
	watch   bool
	sess    *Session
	cu      driver.Context
	stream  driver.Stream
	nccl    driver.NCCLComm

	opMu   sync.Mutex // serialises collectives
	mu     sync.Mutex // guards broken and closed
	broken error      // set once the communicator was aborted
	closed bool
}

// Init sets up this rank's communicator: PrepareProcess, the device from
// LOCAL_RANK, the NCCL unique id (rank 0) exchanged at the rendezvous on
// env.RendezvousAddr(), and ncclCommInitRank, all within opt.Timeout.
func Init(ctx context.Context, env Env, opt Options) (_ *Comm, err error) {
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultTimeout
	}
	if _, err := PrepareProcess(env, opt.OptiXCacheRoot); err != nil {
		return nil, err
	}
	if err := driver.LoadNCCL(); err != nil {
		return nil, err
	}
	visible, err := driver.DeviceCount()
	if err != nil {
		return nil, err
	}
	ordinal := opt.Device
	if !opt.PinDevice {
		if ordinal, err = DeviceFor(env.LocalRank, visible); err != nil {
			return nil, err
		}
	}
	dev, err := driver.DeviceGet(ordinal)
	if err != nil {
		return nil, err
	}
	cu, err := driver.PrimaryContext(dev)
	if err != nil {
		return nil, err
	}
	c := &Comm{env: env, ordinal: ordinal, timeout: opt.Timeout, watch: !opt.NoWatchdog, cu: cu}
	defer func() {
		if err != nil {
			c.abort(err)
			if c.stream.Handle() != 0 {
				_ = c.onDevice(c.stream.Destroy)
			}
			_ = c.cu.Release()
		}
	}()
	var id driver.NCCLUniqueID
	err = c.onDevice(func() error {
		var e error
		if c.stream, e = driver.NewStream(ordinal, driver.StreamNonBlocking); e == nil && env.Rank == 0 {
			id, e = driver.NCCLGetUniqueID()
		}
		return e
	})
	if err != nil {
		return nil, err
	}
	var payload []byte
	if env.Rank == 0 {
		payload = id[:]
	}
	c.sess, err = Join(ctx, env.Rendezvous(opt.Timeout, payload))
	if err != nil {
		return nil, err
	}
	if len(c.sess.Payload()) != driver.NCCLUniqueIDBytes {
		return nil, fmt.Errorf("dist: rendezvous payload of %d bytes is not an NCCL unique id", len(c.sess.Payload()))
	}
	copy(id[:], c.sess.Payload())
	var comm driver.NCCLComm // written by the guarded call; read only once it returned
	err = c.guard(ctx, c.deadline(ctx), "ncclCommInitRank", func() error {
		var e error
		comm, e = driver.NCCLCommInitRank(env.WorldSize, id, env.Rank)
		return e
	})
	if err != nil {
		return nil, err
	}
	c.nccl = comm
	return c, nil
}

// Env returns the rank's placement.
func (c *Comm) Env() Env { return c.env }

// Rank returns the global rank.
func (c *Comm) Rank() int { return c.env.Rank }

// WorldSize returns the number of ranks.
func (c *Comm) WorldSize() int { return c.env.WorldSize }

// Device returns the CUDA ordinal the communicator is bound to.
func (c *Comm) Device() int { return c.ordinal }

// Session returns the job's rendezvous session (host-side AllGather,
// Barrier, liveness).
func (c *Comm) Session() *Session { return c.sess }

// Err returns the error that broke the communicator (nil while healthy).
func (c *Comm) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.broken
}

// onDevice runs fn on the calling goroutine locked to its OS thread with
// the device's context current.
func (c *Comm) onDevice(fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := c.cu.SetCurrent(); err != nil {
		return err
	}
	return fn()
}

// deadline is the earlier of ctx's deadline and now + timeout.
func (c *Comm) deadline(ctx context.Context) time.Time {
	d := time.Now().Add(c.timeout)
	if cd, ok := ctx.Deadline(); ok && cd.Before(d) {
		return cd
	}
	return d
}

// sessionFailed is the watchdog: closed when a peer is lost (nil without
// a watchdog or a session).
func (c *Comm) sessionFailed() <-chan struct{} {
	if !c.watch || c.sess == nil {
		return nil
	}
	return c.sess.Failed()
}

// guard runs a possibly blocking NCCL host call on its own locked thread
// and waits for it, for the peers' health and for the deadline. When the
// wait ends first the communicator is aborted and the call is abandoned; a
// failed call aborts it too.
func (c *Comm) guard(ctx context.Context, deadline time.Time, what string, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- c.onDevice(fn) }()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	var err error
	select {
	case err = <-done:
		if err == nil {
			return nil
		}
	case <-c.sessionFailed():
		err = fmt.Errorf("dist: %s: %w", what, c.sess.Err())
	case <-timer.C:
		err = fmt.Errorf("%w: %s on rank %d did not return in time (a peer is dead or stalled)", ErrTimeout, what, c.env.Rank)
	case <-ctx.Done():
		err = timeoutCause(ctx, what)
	}
	c.abort(err)
	return err
}

// abort breaks the communicator: it tells the peers (Session.Abort) and
// aborts the NCCL communicator, which stops kernels still waiting for a
// peer. The first cause is kept; a closed communicator is left alone.
func (c *Comm) abort(cause error) {
	c.mu.Lock()
	first := c.broken == nil && !c.closed
	if first {
		c.broken = cause
	}
	c.mu.Unlock()
	if !first {
		return
	}
	if c.sess != nil {
		c.sess.Abort(cause.Error())
	}
	if c.nccl.Valid() {
		done := make(chan struct{})
		go func() {
			_ = c.onDevice(c.nccl.Abort)
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(c.timeout):
		}
	}
}

// Abort aborts the communicator and the session (peers see ErrPeerLost at
// once); every later call fails. Use it on every error path; Close after
// Abort only releases what remains. Idempotent.
func (c *Comm) Abort(reason string) {
	c.abort(fmt.Errorf("dist: rank %d: %s", c.env.Rank, reason))
}

// Barrier waits until every rank has called it (over the session, within
// the timeout).
func (c *Comm) Barrier(ctx context.Context) error {
	if err := c.usable(); err != nil {
		return err
	}
	ctx, cancel := context.WithDeadline(ctx, c.deadline(ctx))
	defer cancel()
	if err := c.sess.Barrier(ctx); err != nil {
		c.abort(err)
		return err
	}
	return nil
}

func (c *Comm) usable() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return ErrClosed
	case c.broken != nil:
		return c.broken
	}
	return nil
}

// Close destroys the communicator (ncclCommDestroy, which waits for the
// peers to quiesce: call it on every rank after a final Barrier) and leaves
// the session in order. On a broken communicator it only releases what
// remains. A destroy that does not return within the timeout is reported
// as ErrTimeout. Idempotent.
func (c *Comm) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	broken := c.broken != nil
	c.mu.Unlock()
	var errs []error
	if !broken && c.nccl.Valid() {
		done := make(chan error, 1)
		go func() { done <- c.onDevice(c.nccl.Destroy) }()
		select {
		case err := <-done:
			errs = append(errs, err)
		case <-time.After(c.timeout):
			errs = append(errs, fmt.Errorf("%w: ncclCommDestroy did not return within %v", ErrTimeout, c.timeout))
		}
	}
	if c.sess != nil {
		errs = append(errs, c.sess.Close())
	}
	errs = append(errs, c.onDevice(c.stream.Destroy), c.cu.Release())
	return errors.Join(errs...)
}
