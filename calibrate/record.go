package calibrate

import (
	"fmt"
	"slices"
	"strings"
)

// Record is the outcome of one calibration (RayD's DeviceCalibration, with
// the noise-aware evidence). Times are in seconds. Devices, Seconds,
// Samples and ThroughputWeights are in the layer's device order; the
// Candidate fields are in ladder order (Shares), master-only rung last.
type Record struct {
	// Operation is the key the weights were stored under.
	Operation string `json:"operation"`
	// Rows is the probe batch.
	Rows int `json:"rows"`
	// Devices are the layer's device ordinals, master first.
	Devices []int `json:"devices"`
	// Mode is the decision mode.
	Mode Mode `json:"mode"`
	// Seconds is each device's throughput time (minimum of its samples).
	Seconds []float64 `json:"seconds"`
	// Samples are each device's measured throughput times, re-measurements
	// included.
	Samples [][]float64 `json:"samples"`
	// ThroughputWeights are inversely proportional to Seconds, summing to
	// the device count.
	ThroughputWeights []float64 `json:"throughput_weights"`
	// Candidates are the ladder's rungs (empty without refinement).
	Candidates [][]float64 `json:"candidates"`
	// CandidateSeconds is each rung's time: the minimum of its samples in
	// ModeRayD, their median in ModeNoiseAware.
	CandidateSeconds []float64 `json:"candidate_seconds"`
	// CandidateSamples are each rung's measured times.
	CandidateSamples [][]float64 `json:"candidate_samples"`
	// Comparisons read every sharded rung against the master-only rung
	// (ModeNoiseAware only).
	Comparisons []Comparison `json:"comparisons,omitempty"`
	// Confidence is the two-sided confidence of the comparisons.
	Confidence float64 `json:"confidence,omitempty"`
	// Rounds is the number of measured ladder rounds.
	Rounds int `json:"rounds"`
	// Capped reports that the round or time cap ended the ladder with a
	// comparison that could change the answer still inside the noise.
	Capped bool `json:"capped"`
	// Weights are the chosen weights, stored under Operation.
	Weights []float64 `json:"weights"`
	// Chosen is the index of the chosen rung, −1 without a ladder.
	Chosen int `json:"chosen"`
	// MarginPct is (master-only − best sharded rung) / master-only · 100:
	// positive when sharding won. Zero without both kinds of rung.
	MarginPct float64 `json:"margin_pct"`
	// NearCrossover reports a margin inside the noise: |MarginPct| ≤
	// NearCrossoverBand in ModeRayD; in ModeNoiseAware, a best sharded
	// rung whose comparison with the master alone stayed undecided.
	NearCrossover bool `json:"near_crossover"`
	// Remeasured lists identical devices that disagreed in the throughput
	// stage and were measured again.
	Remeasured []int `json:"remeasured,omitempty"`
	// Contention lists identical devices whose throughput times still
	// disagree by more than the tolerance (CONTENDED).
	Contention []Disagreement `json:"contention,omitempty"`
}

// Disagreement is a device measured slower than an identical peer by more
// than the contention tolerance.
type Disagreement struct {
	Device      int     `json:"device"`
	Seconds     float64 `json:"seconds"`
	Peer        int     `json:"peer"`
	PeerSeconds float64 `json:"peer_seconds"`
}

// Contended reports whether the throughput stage was contended.
func (r *Record) Contended() bool { return len(r.Contention) > 0 }

// RowsPerSecond is Rows / Seconds per device (0 where no time was measured).
func (r *Record) RowsPerSecond() []float64 {
	out := make([]float64, len(r.Seconds))
	for i, s := range r.Seconds {
		if s > 0 {
			out[i] = float64(r.Rows) / s
		}
	}
	return out
}

// MasterOnly is the index of the master-only rung (every remote weight
// zero), or −1.
func (r *Record) MasterOnly() int {
	for k, w := range r.Candidates {
		if !sharded(w) {
			return k
		}
	}
	return -1
}

// BestSharded is the index of the fastest rung with a remote share, or −1.
func (r *Record) BestSharded() int {
	best := -1
	for k, w := range r.Candidates {
		if sharded(w) && k < len(r.CandidateSeconds) && (best < 0 || r.CandidateSeconds[k] < r.CandidateSeconds[best]) {
			best = k
		}
	}
	return best
}

// Sharded reports whether the chosen weights give a remote device rows.
func (r *Record) Sharded() bool { return sharded(r.Weights) }

// sharded reports whether any remote weight is non-zero.
func sharded(w []float64) bool {
	return len(w) > 1 && slices.ContainsFunc(w[1:], func(x float64) bool { return x != 0 })
}

// margin computes MarginPct from the ladder (§10.5).
func (r *Record) margin() float64 {
	mo, bs := r.MasterOnly(), r.BestSharded()
	if mo < 0 || bs < 0 || r.CandidateSeconds[mo] <= 0 {
		return 0
	}
	m := r.CandidateSeconds[mo]
	return (m - r.CandidateSeconds[bs]) / m * 100
}

// String is describe(): the probe line, one line per device (throughput
// time, rate and weight), one per rung (time, the chosen one marked), in
// RayD's formats; then the margin to the master alone, the noise-aware
// comparisons, and the NEAR-CROSSOVER and CONTENDED warnings.
func (r *Record) String() string {
	lines := []string{fmt.Sprintf("%s probe, %d rows", r.Operation, r.Rows)}
	weights := r.ThroughputWeights
	if len(weights) == 0 {
		weights = r.Weights
	}
	for i, d := range r.Devices {
		w := 0.0
		if i < len(weights) {
			w = weights[i]
		}
		if i >= len(r.Seconds) || r.Seconds[i] <= 0 {
			lines = append(lines, fmt.Sprintf("  cuda:%d  (no timing)  weight %.4f", d, w))
			continue
		}
		s := r.Seconds[i]
		lines = append(lines, fmt.Sprintf("  cuda:%d  %8.3f ms  %8.2f Mrow/s  weight %.4f", d, s*1e3, float64(r.Rows)/s/1e6, w))
	}
	for k, w := range r.Candidates {
		line := fmt.Sprintf("  dispatch %s  %8.3f ms", formatWeights(w), r.CandidateSeconds[k]*1e3)
		if slices.Equal(w, r.Weights) {
			line += "  <-- chosen"
		}
		lines = append(lines, line)
	}
	lines = append(lines, r.notes()...)
	return strings.Join(lines, "\n")
}

// notes are the lines after RayD's.
func (r *Record) notes() []string {
	var lines []string
	mo, bs := r.MasterOnly(), r.BestSharded()
	if mo >= 0 && bs >= 0 {
		verdict := "chose the master alone"
		switch {
		case r.Sharded() && r.MarginPct <= 0:
			verdict = "kept a remote share on tolerance alone"
		case r.Sharded():
			verdict = "sharded with a measured margin"
		}
		lines = append(lines, fmt.Sprintf("  margin: best sharded rung %.3f ms vs master-only %.3f ms (%+.1f%% for sharding); %s",
			r.CandidateSeconds[bs]*1e3, r.CandidateSeconds[mo]*1e3, r.MarginPct, verdict))
	}
	if r.Mode == ModeNoiseAware && len(r.Candidates) > 0 {
		state := "every comparison that could change the answer is outside the noise"
		if r.Capped {
			state = "capped with a comparison inside the noise"
		}
		lines = append(lines, fmt.Sprintf("  noise-aware: %d rounds at %.0f%% confidence, %s", r.Rounds, r.Confidence*100, state))
		for _, c := range r.Comparisons {
			bound := "unbounded: too few runs"
			if c.Bounded {
				bound = fmt.Sprintf("[%+.1f%%, %+.1f%%]", c.Low*100, c.High*100)
			}
			lines = append(lines, fmt.Sprintf("  vs master-only %s: %+.1f%% %s over %d runs: %s",
				formatWeights(r.Candidates[c.Rung]), c.Shift*100, bound, c.Samples, c.Verdict))
		}
	}
	if r.NearCrossover {
		advice := "the decision flips between runs; pin the master alone"
		if r.Mode == ModeNoiseAware {
			advice = "the margin is inside the measured run-to-run noise"
			if !r.Sharded() {
				advice += "; the master alone was kept"
			}
		}
		lines = append(lines, "  NEAR-CROSSOVER: "+advice)
	}
	if len(r.Remeasured) > 0 {
		lines = append(lines, fmt.Sprintf("  re-measured %s: identical devices disagreed in the throughput stage", devicesText(r.Remeasured)))
	}
	for _, c := range r.Contention {
		lines = append(lines, fmt.Sprintf("  CONTENDED: cuda:%d took %.3f ms against %.3f ms on identical cuda:%d (%+.0f%%); calibrate on a quiet machine",
			c.Device, c.Seconds*1e3, c.PeerSeconds*1e3, c.Peer, (c.Seconds/c.PeerSeconds-1)*100))
	}
	return lines
}

func devicesText(ds []int) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("cuda:%d", d)
	}
	return strings.Join(parts, ", ")
}
