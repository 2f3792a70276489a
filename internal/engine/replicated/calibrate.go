package replicated

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// Calibration returns the calibration seam of a layer of two or more
// replicas.
func (e *Engine) Calibration() (engine.Calibration, bool) {
	if len(e.l.Devices()) < 2 {
		return nil, false
	}
	return &calibration{e: e, timer: e.newTimer(), views: map[string]*Engine{}}, true
}

// calibration holds the views of one calibration: engines over the scene's
// own replicas, one per weight vector, planned with the scene's options but
// a row floor of 1 and those weights for every operation.
type calibration struct {
	e     *Engine
	timer *callTimer
	mu    sync.Mutex
	views map[string]*Engine
	probe *builtinProbe
}

func (c *calibration) Layer() *shard.Layer { return c.e.l }

// View returns the engine dispatching at weights, planning it on first use.
func (c *calibration) View(ctx context.Context, weights []float64) (engine.Engine, error) {
	return c.view(ctx, weights)
}

func (c *calibration) view(ctx context.Context, weights []float64) (*Engine, error) {
	key := weightKey(weights)
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.views[key]; ok {
		return v, nil
	}
	reps, err := c.e.l.Replicas()
	if err != nil {
		return nil, err
	}
	o := c.e.l.Options()
	o.Weights, o.OperationWeights = slices.Clone(weights), nil
	o.MinRaysPerDevice, o.SkipWarmUp = 1, true
	l, err := shard.Plan(c.e.l.Devices(), c.e.src.Topology(), o)
	if err != nil {
		return nil, err
	}
	if err := l.Build(ctx, shard.Borrow(reps)); err != nil {
		return nil, errors.Join(err, l.Close())
	}
	v := c.e.view(l)
	c.views[key] = v
	return v, nil
}

// oneHot is the weight vector that runs everything on device's first
// replica.
func (c *calibration) oneHot(device int) ([]float64, error) {
	devs := c.e.l.Devices()
	i := slices.Index(devs, device)
	if i < 0 {
		return nil, fmt.Errorf("%w: device %d is not one of the scene's %v", shard.ErrInvalidOption, device, devs)
	}
	w := make([]float64, len(devs))
	w[i] = 1
	return w, nil
}

func (c *calibration) Time(fn func() error) (time.Duration, error) { return c.timer.time(fn) }

// Close closes every view (the borrowed replicas stay open), the probe's
// buffers and the timer.
func (c *calibration) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, v := range c.views {
		errs = append(errs, v.l.Close())
		close(v.slots)
		for m := range v.slots {
			m.close()
		}
	}
	c.views = nil
	if c.probe != nil {
		c.probe.close()
	}
	return errors.Join(append(errs, c.timer.close())...)
}

func weightKey(w []float64) string {
	parts := make([]string, len(w))
	for i, x := range w {
		parts[i] = fmt.Sprintf("%x", x)
	}
	return strings.Join(parts, ",")
}

// callTimer times one synchronous call from a synchronized start: with
// CUDA events on a stream of the master when the replicas are CUDA devices
// (every device synchronized first), with the host clock otherwise.
type callTimer struct {
	devs       []*launch.Device // master first; nil on other sources
	st         *launch.Stream
	start, end *launch.Event
}

func (e *Engine) newTimer() *callTimer { return &callTimer{devs: e.devices()} }

// time runs fn once and returns its duration.
func (t *callTimer) time(fn func() error) (time.Duration, error) {
	if len(t.devs) == 0 {
		start := time.Now()
		err := fn()
		return time.Since(start), err
	}
	if t.st == nil {
		var err error
		if t.st, err = t.devs[0].NewStream(); err != nil {
			return 0, err
		}
		if t.start, err = t.devs[0].NewEvent(true); err != nil {
			return 0, err
		}
		if t.end, err = t.devs[0].NewEvent(true); err != nil {
			return 0, err
		}
	}
	for _, d := range t.devs {
		if err := d.Synchronize(); err != nil {
			return 0, err
		}
	}
	return timeEvents(t.st, t.start, t.end, fn)
}

// timeEvents records start on st, runs fn (which returns once its work is
// done, or enqueues it on st), records end and returns the elapsed time.
func timeEvents(st *launch.Stream, start, end *launch.Event, fn func() error) (time.Duration, error) {
	if err := start.Record(st); err != nil {
		return 0, err
	}
	if err := fn(); err != nil {
		return 0, err
	}
	if err := end.Record(st); err != nil {
		return 0, err
	}
	if err := end.Synchronize(); err != nil {
		return 0, err
	}
	ms, err := launch.Elapsed(start, end)
	if err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}

func (t *callTimer) close() error {
	var errs []error
	for _, ev := range []*launch.Event{t.start, t.end} {
		if ev != nil {
			errs = append(errs, ev.Close())
		}
	}
	if t.st != nil {
		errs = append(errs, t.st.Close())
	}
	return errors.Join(errs...)
}
