package shard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Layer is the replicated multi-device layer of one scene: the validated
// device list and options, the weights, the replicas once built, the
// introspection records of the last call and the poison marker. Its methods
// are safe for concurrent use; calls that launch hold the replica set
// shared, Build, Broadcast and Close hold it exclusively.
type Layer struct {
	devices   []int
	opts      Options
	chunked   bool
	pipelined bool

	rw       sync.RWMutex // guards replicas
	replicas []Replica

	mu           sync.Mutex // guards everything below
	poison       *PoisonedError
	opWeights    map[string][]float64
	latest       []float64
	lastDispatch *DispatchRecord
	lastPlan     *ChunkPlan
	counter      func() (calls, binds int64)
}

// Plan validates a multi-device request and decides who gets a layer.
// Checks run in the spec's order and the first failure is returned: options
// without devices (ErrOptionsWithoutDevices); the device list (empty or
// duplicate *DeviceError, ErrNoDevices when topo reports none, then
// out-of-range ordinals); Weights, OperationWeights, the chunking knobs and
// the pipeline knobs (*OptionError, validated even for one device); then,
// for two or more devices, bidirectional peer access between the master and
// every remote and identical device identities (*TopologyError), each
// unless the options accept it.
//
// It returns a nil layer and no error when devices is nil and o is the zero
// value, and when there is one device and no chunking knob (ChunkRays,
// MemoryBudgetBytes, Offload): the caller then takes its plain single-device
// path. One device with a chunking knob gets a chunked layer; two or more
// devices always get a layer, pipelined unless DisablePipeline.
func Plan(devices []int, topo Topology, o Options) (*Layer, error) {
	if devices == nil {
		if o.isZero() {
			return nil, nil
		}
		return nil, ErrOptionsWithoutDevices
	}
	if err := checkDevices(devices, topo, o.AllowSameDevice); err != nil {
		return nil, err
	}
	norm, err := o.normalize(len(devices))
	if err != nil {
		return nil, err
	}
	if err := checkTopology(devices, topo, &norm); err != nil {
		return nil, err
	}
	if len(devices) == 1 && !norm.chunking() {
		return nil, nil
	}
	l := &Layer{
		devices:   slices.Clone(devices),
		opts:      norm,
		chunked:   norm.chunking(),
		pipelined: !norm.DisablePipeline && len(devices) > 1,
		opWeights: map[string][]float64{},
	}
	for k, w := range norm.OperationWeights {
		l.opWeights[k] = slices.Clone(w) // calibration writes here, never into opts
	}
	l.latest = l.baseWeights()
	return l, nil
}

// Devices returns the device ordinals; the first is the master.
func (l *Layer) Devices() []int { return slices.Clone(l.devices) }

// Master returns the master device ordinal.
func (l *Layer) Master() int { return l.devices[0] }

// Chunked reports whether a chunking knob engaged the chunked executor.
func (l *Layer) Chunked() bool { return l.chunked }

// Pipelined reports whether multi-device per_ray calls use the pipelined
// executor.
func (l *Layer) Pipelined() bool { return l.pipelined }

// Options returns the effective options: the defaults filled in, the
// operation weights as given at Plan (calibration results are read with
// WeightsFor).
func (l *Layer) Options() Options {
	o := l.opts
	o.Weights = slices.Clone(o.Weights)
	if o.OperationWeights != nil {
		o.OperationWeights = make(map[string][]float64, len(l.opts.OperationWeights))
		for k, w := range l.opts.OperationWeights {
			o.OperationWeights[k] = slices.Clone(w)
		}
	}
	return o
}

// baseWeights is Options.Weights or equal weights.
func (l *Layer) baseWeights() []float64 {
	if l.opts.Weights != nil {
		return slices.Clone(l.opts.Weights)
	}
	return equal(len(l.devices))
}

// family is the weight family of an operation key: the text before the
// first ':', with every intersect_* variant folded into "intersect".
func family(op string) string {
	f, _, _ := strings.Cut(op, ":")
	if strings.HasPrefix(f, "intersect_") {
		return "intersect"
	}
	return f
}

// WeightsFor resolves the split of an operation: an exact key of the
// operation weights, then its family, then the base weights. An empty op
// returns the base weights; a blank one is an *OptionError.
func (l *Layer) WeightsFor(op string) ([]float64, error) {
	if op != "" && strings.TrimSpace(op) == "" {
		return nil, &OptionError{Field: "operation", Reason: "needs a non-empty operation name"}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.poison != nil {
		return nil, l.poison
	}
	return slices.Clone(l.weightsLocked(op)), nil
}

func (l *Layer) weightsLocked(op string) []float64 {
	if op == "" {
		return l.baseWeights()
	}
	if w, ok := l.opWeights[op]; ok {
		return w
	}
	if w, ok := l.opWeights[family(op)]; ok {
		return w
	}
	return l.baseWeights()
}

// SetOperationWeights stores weights under an exact operation key, as
// calibration does: it replaces any entry for that key, leaves every other
// operation's split unchanged and becomes what DeviceWeights reports. The
// weights are validated like Options.Weights.
func (l *Layer) SetOperationWeights(op string, w []float64) error {
	if strings.TrimSpace(op) == "" {
		return &OptionError{Field: "operation", Reason: "needs a non-empty operation name"}
	}
	w, err := normalizeWeights(fmt.Sprintf("OperationWeights[%q]", op), w, len(l.devices))
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.poison != nil {
		return l.poison
	}
	l.opWeights[op] = w
	l.latest = slices.Clone(w)
	return nil
}

// DeviceWeights returns the latest weights: the base weights, or the last
// ones stored by SetOperationWeights.
func (l *Layer) DeviceWeights() []float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.latest)
}

// LastDispatch returns a copy of the dispatch record of the most recent call
// that got past planning, or nil.
func (l *Layer) LastDispatch() *DispatchRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lastDispatch == nil {
		return nil
	}
	r := *l.lastDispatch
	r.Weights = slices.Clone(r.Weights)
	r.Shards = slices.Clone(r.Shards)
	return &r
}

// LastChunkPlan returns a copy of the chunk plan of the most recent call
// that got past planning, or nil when that call was a per_ray master call.
func (l *Layer) LastChunkPlan() *ChunkPlan {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lastPlan == nil {
		return nil
	}
	p := *l.lastPlan
	return &p
}

// record stores the introspection records of a call.
func (l *Layer) record(s *Schedule) *DispatchRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := s.Dispatch
	l.lastDispatch = &d
	l.lastPlan = s.Plan
	return &d
}

// SetCallCounter installs the driver-call counter the layer reads around
// each call (DispatchRecord.DriverCalls and ContextBinds): a function
// returning the process's running totals. Nil (the default) records zeros.
func (l *Layer) SetCallCounter(f func() (calls, binds int64)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counter = f
}

// callCount is a reading of the layer's call counter at a call's start.
type callCount struct {
	f            func() (int64, int64)
	calls, binds int64
}

func (l *Layer) startCount() callCount {
	l.mu.Lock()
	f := l.counter
	l.mu.Unlock()
	if f == nil {
		return callCount{}
	}
	c, b := f()
	return callCount{f: f, calls: c, binds: b}
}

// Count starts counting the driver calls of a call its caller runs itself
// (the single-device call of a master dispatch, after RowsOnMaster or
// LanesOnMaster); the returned function, called when that call is done,
// stores them in the dispatch record made meanwhile if it is still the
// last one.
func (l *Layer) Count() (done func()) {
	c := l.startCount()
	l.mu.Lock()
	prev := l.lastDispatch
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		rec := l.lastDispatch
		l.mu.Unlock()
		if rec != nil && rec != prev {
			l.counted(rec, c)
		}
	}
}

// counted stores the calls made since c into rec when rec is still the
// last dispatch record.
func (l *Layer) counted(rec *DispatchRecord, c callCount) {
	if c.f == nil {
		return
	}
	calls, binds := c.f()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lastDispatch == rec {
		rec.DriverCalls, rec.ContextBinds = calls-c.calls, binds-c.binds
	}
}

// measured sets MeasuredRowBytes of the current plan, once.
func (l *Layer) measured(p *ChunkPlan, bytes int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p.MeasuredRowBytes == nil {
		p.MeasuredRowBytes = &bytes
	}
}

// Poisoned returns the poison marker as an error (a *PoisonedError), or nil.
func (l *Layer) Poisoned() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.poison == nil {
		return nil
	}
	return l.poison
}

// poisonWith marks the layer poisoned by operation and returns the marker.
func (l *Layer) poisonWith(operation string, cause error) *PoisonedError {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.poison = &PoisonedError{Operation: operation, Cause: cause}
	return l.poison
}

// MasterReplica returns the master's replica.
func (l *Layer) MasterReplica() (Replica, error) {
	l.rw.RLock()
	defer l.rw.RUnlock()
	reps, err := l.ready()
	if err != nil {
		return nil, err
	}
	return reps[0], nil
}

// Replicas returns the built replicas in device order (master first), for a
// second layer over the same devices (see Borrow).
func (l *Layer) Replicas() ([]Replica, error) {
	l.rw.RLock()
	defer l.rw.RUnlock()
	reps, err := l.ready()
	if err != nil {
		return nil, err
	}
	return append([]Replica(nil), reps...), nil
}

// Borrow is a Builder that hands out reps (one per slot, as Replicas
// returns them) without building anything; the layer built from it leaves
// their Close to their owner. It serves a second layer planned over the same
// devices with other options, such as a calibration layer with a lower floor.
func Borrow(reps []Replica) Builder {
	return func(ctx context.Context, slot Slot) (Replica, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if slot.Index < 0 || slot.Index >= len(reps) || reps[slot.Index].Device() != slot.Device {
			return nil, fmt.Errorf("shard: no borrowed replica for slot %d on device %d", slot.Index, slot.Device)
		}
		return borrowed{reps[slot.Index]}, nil
	}
}

// borrowed is a replica whose Close is its owner's.
type borrowed struct{ Replica }

// Close does nothing: the owner closes the replica.
func (borrowed) Close() error { return nil }

// Unwrap returns the owner's replica (for callers that need its concrete
// type, such as a device's acceleration structure).
func (b borrowed) Unwrap() Replica { return b.Replica }

// Unwrap returns the replica behind a borrowed one (see Borrow), or r.
func Unwrap(r Replica) Replica {
	if b, ok := r.(borrowed); ok {
		return b.Replica
	}
	return r
}

// ready returns the replica set for a call, or the refusal. The caller holds
// l.rw (shared or exclusive).
func (l *Layer) ready() ([]Replica, error) {
	if err := l.Poisoned(); err != nil {
		return nil, err
	}
	if l.replicas == nil {
		return nil, ErrNotBuilt
	}
	return l.replicas, nil
}

// errJoin keeps the original error of a call and attaches a poison note.
func errJoin(primary, note error) error {
	if primary == nil {
		return note
	}
	if note == nil {
		return primary
	}
	return errors.Join(primary, note)
}
