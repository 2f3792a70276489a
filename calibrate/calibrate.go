package calibrate

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"
)

// Layer is what Calibrate needs of a multi-device layer: its devices
// (master first) and a store for the result under an exact operation key
// that leaves every other operation's split unchanged. *shard.Layer
// implements it (and its Poisoned method, which Calibrate consults first
// when a layer has one); weights stored there survive a rebuild.
type Layer interface {
	Devices() []int
	SetOperationWeights(op string, weights []float64) error
}

// Calibrate measures how to split the probe's operation across the layer's
// devices and stores the answer with layer.SetOperationWeights under the
// exact operation key.
//
// Arguments are checked in the spec's order and the first failure is
// returned with nothing changed: a nil layer or one of fewer than two
// devices (ErrNeedsDevices); the probe and operation (ErrProbeNeedsOperation,
// ErrRelabelledProbe, ErrEmptyOperation); Rows and Repeats (ErrNotPositive);
// WarmUp (ErrNegative); then the remaining knobs; then a poisoned layer is
// refused with its own error.
//
// Stage 1 times the probe on every replica alone, device by device in
// each round, and makes the weights inversely proportional to each
// device's fastest time (ErrNoTime when no device measured any).
// Identical devices whose times disagree by more than ContentionTolerance
// are re-measured (ModeNoiseAware) and, if they still disagree, reported
// in Record.Contention. Stage 2, unless SkipRefine, times the real
// dispatch on the ladder of Shares and decides as Mode says. A probe
// failure is returned as a *ProbeError; a cancelled ctx stops calibration
// between two probe runs.
func Calibrate(ctx context.Context, layer Layer, probe Probe, o Options) (*Record, error) {
	if isNil(layer) {
		return nil, fmt.Errorf("%w (got no multi-device layer)", ErrNeedsDevices)
	}
	devices := layer.Devices()
	if len(devices) < 2 {
		return nil, fmt.Errorf("%w (got devices=%v)", ErrNeedsDevices, devices)
	}
	cfg, err := resolve(probe, o)
	if err != nil {
		return nil, err
	}
	if o.Identities != nil && len(o.Identities) != len(devices) {
		return nil, &ArgumentError{Field: "Identities",
			Reason: fmt.Sprintf("has %d entries but %d devices", len(o.Identities), len(devices))}
	}
	if p, ok := layer.(interface{ Poisoned() error }); ok {
		if err := p.Poisoned(); err != nil {
			return nil, err
		}
	}
	if b, ok := probe.(builtIn); ok {
		probe = b.Probe
	}
	r := &run{ctx: ctx, probe: probe, cfg: cfg, devices: devices}
	rec, err := r.calibrate()
	if err != nil {
		return nil, err
	}
	if err := layer.SetOperationWeights(cfg.target, slices.Clone(rec.Weights)); err != nil {
		return nil, err
	}
	return rec, nil
}

// isNil reports whether l is nil or a nil pointer (a single-device scene
// has no layer).
func isNil(l Layer) bool {
	if l == nil {
		return true
	}
	v := reflect.ValueOf(l)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// run is one calibration in progress.
type run struct {
	ctx     context.Context
	probe   Probe
	cfg     config
	devices []int
	bar     *progress
	spent   time.Duration // probe time of the ladder
}

func (r *run) calibrate() (*Record, error) {
	n, rounds := len(r.devices), r.cfg.WarmUp+r.cfg.Repeats
	total := rounds * n
	if !r.cfg.SkipRefine {
		total += rounds * len(shares)
		if r.cfg.Mode == ModeNoiseAware {
			total += r.cfg.Repeats * (len(shares) - 2) // the interleaved master-only runs
		}
	}
	r.bar = newProgress(r.cfg.Progress, r.cfg.target, total)
	defer r.bar.done()
	rec := &Record{Operation: r.cfg.target, Rows: r.cfg.Rows, Devices: slices.Clone(r.devices), Mode: r.cfg.Mode, Chosen: -1}
	if err := r.throughput(rec); err != nil {
		return nil, err
	}
	if r.cfg.SkipRefine {
		rec.Weights = slices.Clone(rec.ThroughputWeights)
		return rec, nil
	}
	if err := r.refine(rec); err != nil {
		return nil, err
	}
	rec.MarginPct = rec.margin()
	return rec, nil
}

// replica times one probe run on device index i.
func (r *run) replica(i int) (float64, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, fmt.Errorf("calibrate: %s: cancelled: %w", r.cfg.target, err)
	}
	t, err := r.probe.TimeReplica(r.ctx, r.devices[i])
	r.bar.step()
	if err != nil {
		return 0, &ProbeError{Operation: r.cfg.target, Stage: stageThroughput, Device: r.devices[i], Err: err}
	}
	return t.Seconds(), nil
}

// dispatch times one probe run of the dispatch at weights w.
func (r *run) dispatch(w []float64) (float64, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, fmt.Errorf("calibrate: %s: cancelled: %w", r.cfg.target, err)
	}
	t, err := r.probe.TimeDispatch(r.ctx, slices.Clone(w))
	r.bar.step()
	if err != nil {
		return 0, &ProbeError{Operation: r.cfg.target, Stage: stageRefine, Weights: slices.Clone(w), Err: err}
	}
	r.spent += max(t, 0)
	return t.Seconds(), nil
}

// throughput is stage 1: interleaved rounds over the replicas, the minimum
// per device, the contention check, and weights ∝ 1/time summing to n.
func (r *run) throughput(rec *Record) error {
	n := len(r.devices)
	r.bar.describe("throughput " + r.cfg.target)
	rec.Samples = make([][]float64, n)
	for round := range r.cfg.WarmUp + r.cfg.Repeats {
		for i := range n {
			s, err := r.replica(i)
			if err != nil {
				return err
			}
			if round >= r.cfg.WarmUp {
				rec.Samples[i] = append(rec.Samples[i], s)
			}
		}
	}
	if err := r.contention(rec); err != nil {
		return err
	}
	rec.Seconds = make([]float64, n)
	rates := make([]float64, n)
	sum := 0.0
	for i, s := range rec.Samples {
		rec.Seconds[i] = minimum(s)
		if rec.Seconds[i] > 0 {
			rates[i] = 1 / rec.Seconds[i]
		}
		sum += rates[i]
	}
	if sum <= 0 {
		return fmt.Errorf("%w: %s probe times %v", ErrNoTime, r.cfg.target, rec.Samples)
	}
	rec.ThroughputWeights = make([]float64, n)
	for i, rate := range rates {
		rec.ThroughputWeights[i] = rate * float64(n) / sum
	}
	return nil
}

// groups returns the device indices of each set of identical devices (two
// or more), in device order: by Options.Identities, or all devices when
// none are given.
func (r *run) groups() [][]int {
	ids := r.cfg.Identities
	if ids == nil {
		all := make([]int, len(r.devices))
		for i := range all {
			all[i] = i
		}
		return [][]int{all}
	}
	var keys []string
	byID := map[string][]int{}
	for i, id := range ids {
		if _, ok := byID[id]; !ok {
			keys = append(keys, id)
		}
		byID[id] = append(byID[id], i)
	}
	var out [][]int
	for _, id := range keys {
		if len(byID[id]) > 1 {
			out = append(out, byID[id])
		}
	}
	return out
}

// disagreements lists the devices of group slower than the group's
// fastest by more than the tolerance.
func (r *run) disagreements(rec *Record, group []int) []Disagreement {
	fast := -1
	for _, i := range group {
		s := minimum(rec.Samples[i])
		if s > 0 && (fast < 0 || s < minimum(rec.Samples[fast])) {
			fast = i
		}
	}
	if fast < 0 {
		return nil
	}
	peer := minimum(rec.Samples[fast])
	var out []Disagreement
	for _, i := range group {
		if s := minimum(rec.Samples[i]); s > peer*(1+r.cfg.ContentionTolerance) {
			out = append(out, Disagreement{Device: r.devices[i], Seconds: s, Peer: r.devices[fast], PeerSeconds: peer})
		}
	}
	return out
}

// contention checks every group of identical devices; in ModeNoiseAware a
// disagreeing group is measured again (Repeats more interleaved rounds, at
// least three) before what still disagrees is reported.
func (r *run) contention(rec *Record) error {
	for _, group := range r.groups() {
		if len(r.disagreements(rec, group)) > 0 && r.cfg.Mode == ModeNoiseAware {
			extra := max(r.cfg.Repeats, 3)
			r.bar.grow(extra * len(group))
			r.bar.describe("re-measuring " + r.cfg.target)
			for range extra {
				for _, i := range group {
					s, err := r.replica(i)
					if err != nil {
						return err
					}
					rec.Samples[i] = append(rec.Samples[i], s)
				}
			}
			for _, i := range group {
				rec.Remeasured = append(rec.Remeasured, r.devices[i])
			}
		}
		rec.Contention = append(rec.Contention, r.disagreements(rec, group)...)
	}
	return nil
}
