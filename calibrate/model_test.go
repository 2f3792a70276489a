package calibrate_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// model is a probe over the seed's §5.2 timing model, pure arithmetic: a
// replica run costs rows·computeNs/speed; a dispatch runs the master's
// shard and every remote's (bytes/bw and compute overlapped by the
// pipeline, the smaller of the two exposed for one chunk in chunks), then
// pays the fixed cost of a sharded dispatch; every run pays overhead. A
// multiplicative noise and a neighbour on one device for a window of probe
// calls perturb the measurements, never truth.
type model struct {
	rows      int
	computeNs float64 // per row on a device of speed 1
	rowBytes  float64 // transferred per remote row (input + output)
	linkBps   float64
	fixed     time.Duration // a sharded dispatch's fixed cost
	overhead  time.Duration // every run's
	chunks    int           // pipeline chunks per remote shard
	speed     []float64

	noise func(r *rand.Rand) float64 // multiplicative; nil: none
	rng   *rand.Rand
	// neighbour multiplies device contendDevice's compute by contendFactor
	// during probe calls [contendFrom, contendTo).
	contendDevice                      int
	contendFactor                      float64
	contendFrom, contendTo             int
	calls, replicaCalls, dispatchCalls int
}

// RayD's figures (seed §5.1 and §5.2): a 49 GB/s link, 4,194,304 rays.
const (
	raydRows = 4_194_304
	raydLink = 49e9
)

// The seed's four configurations. The light 1-bounce reflections' fixed
// cost is the one its calibration ladders imply (§5.4: the 1/4 share timed
// 1-3% slower than the master alone), with the master-only rung's host
// overhead of ~0.15 ms (1.28 ms against the 1.14 ms single-device run).
func lightIntersect() *model {
	return &model{rows: raydRows, computeNs: 0.31, rowBytes: 100, linkBps: raydLink, fixed: 400 * time.Microsecond}
}

func computeIntersect() *model {
	return &model{rows: raydRows, computeNs: 4.55, rowBytes: 100, linkBps: raydLink, fixed: 2300 * time.Microsecond}
}

func computeReflections4() *model {
	return &model{rows: raydRows, computeNs: 12.71, rowBytes: 60, linkBps: raydLink, fixed: 1700 * time.Microsecond}
}

func lightReflections1() *model {
	return &model{rows: raydRows, computeNs: 0.27, rowBytes: 33, linkBps: raydLink,
		fixed: 260 * time.Microsecond, overhead: 150 * time.Microsecond}
}

// jitter is run-to-run noise that only ever adds time: exp(σ·|z|).
func jitter(sigma float64) func(*rand.Rand) float64 {
	return func(r *rand.Rand) float64 { return math.Exp(sigma * math.Abs(r.NormFloat64())) }
}

// count is the number of devices modelled.
func (m *model) count() int { return max(len(m.speed), 2) }

func (m *model) speedOf(d int) float64 {
	if d < len(m.speed) && m.speed[d] > 0 {
		return m.speed[d]
	}
	return 1
}

// factor is device d's compute slowdown for the current call.
func (m *model) factor(d int) float64 {
	if m.contendFactor > 0 && d == m.contendDevice && m.calls >= m.contendFrom && m.calls < m.contendTo {
		return m.contendFactor
	}
	return 1
}

func (m *model) perturb(t float64) time.Duration {
	if m.noise != nil {
		t *= m.noise(m.rng)
	}
	return time.Duration(t)
}

// truth is the noise-free, uncontended time of a dispatch at w.
func (m *model) truth(w []float64) time.Duration {
	return time.Duration(m.dispatchNs(w, func(int) float64 { return 1 }))
}

func (m *model) dispatchNs(w []float64, slow func(int) float64) float64 {
	chunks := float64(max(m.chunks, 4))
	worst, remote := 0.0, false
	for _, s := range rowShards(w, m.rows) {
		d, rows := s[0], float64(s[1])
		c := rows * m.computeNs / m.speedOf(d) * slow(d)
		if d == 0 {
			worst = max(worst, c)
			continue
		}
		remote = true
		x := rows * m.rowBytes / m.linkBps * 1e9
		worst = max(worst, max(x, c)+min(x, c)/chunks)
	}
	if remote {
		worst += float64(m.fixed)
	}
	return worst + float64(m.overhead)
}

// TimeReplica implements calibrate.Probe.
func (m *model) TimeReplica(_ context.Context, d int) (time.Duration, error) {
	t := float64(m.rows)*m.computeNs/m.speedOf(d)*m.factor(d) + float64(m.overhead)
	m.calls++
	m.replicaCalls++
	return m.perturb(t), nil
}

// TimeDispatch implements calibrate.Probe.
func (m *model) TimeDispatch(_ context.Context, w []float64) (time.Duration, error) {
	t := m.dispatchNs(w, m.factor)
	m.calls++
	m.dispatchCalls++
	return m.perturb(t), nil
}

// withNoise seeds the model's noise.
func (m *model) withNoise(seed uint64, noise func(*rand.Rand) float64) *model {
	m.rng = rand.New(rand.NewPCG(seed, 99))
	m.noise = noise
	return m
}

// rowShards is the spec's row split (§4.2): float64 truncation of the
// carried weight, the last device taking the remainder, empty shards
// dropped. It returns (device index, rows) pairs.
func rowShards(w []float64, total int) [][2]int {
	sum := 0.0
	for _, x := range w {
		sum += x
	}
	var out [][2]int
	carried, start := 0.0, 0
	for i := range w {
		stop := total
		if i < len(w)-1 {
			carried += w[i]
			stop = int(float64(total) * carried / sum)
		}
		if stop > start {
			out = append(out, [2]int{i, stop - start})
		}
		start = stop
	}
	return out
}

// fakeLayer stands in for a multi-device layer: it stores weights per
// exact operation key, validated as the layer validates them, and records
// every store.
type fakeLayer struct {
	devices []int
	weights map[string][]float64
	stores  []string
	poison  error
}

func newLayer(n int) *fakeLayer {
	l := &fakeLayer{weights: map[string][]float64{}}
	for i := range n {
		l.devices = append(l.devices, i)
	}
	return l
}

func (l *fakeLayer) Devices() []int { return slices.Clone(l.devices) }

func (l *fakeLayer) Poisoned() error { return l.poison }

func (l *fakeLayer) SetOperationWeights(op string, w []float64) error {
	if strings.TrimSpace(op) == "" || len(w) != len(l.devices) {
		return errors.New("fake layer: bad weights")
	}
	sum := 0.0
	for _, x := range w {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return errors.New("fake layer: bad weight")
		}
		sum += x
	}
	if sum <= 0 {
		return errors.New("fake layer: weights sum to zero")
	}
	l.weights[op] = slices.Clone(w)
	l.stores = append(l.stores, op)
	return nil
}

// weightsFor is the stored split of op, or equal weights.
func (l *fakeLayer) weightsFor(op string) []float64 {
	if w, ok := l.weights[op]; ok {
		return w
	}
	eq := make([]float64, len(l.devices))
	for i := range eq {
		eq[i] = 1
	}
	return eq
}
