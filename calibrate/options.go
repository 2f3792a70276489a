package calibrate

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Mode selects how the refinement stage decides.
type Mode string

const (
	// ModeNoiseAware (the default) repeats the ladder's rungs, each
	// interleaved with the master-only rung, until every comparison that
	// can change the answer is outside the measured run-to-run spread (a
	// distribution-free confidence bound on the ratio of the two rungs'
	// times), or until the round or time cap; it ships a split only when
	// the split is faster than the master alone with that confidence, and
	// otherwise the master alone. Identical devices whose throughput
	// times disagree are re-measured before they are reported CONTENDED.
	ModeNoiseAware Mode = "noise-aware"
	// ModeRayD is RayD's calibrate_devices, for comparison: each rung is
	// timed warm-up + repeats times, its minimum is its time, and the
	// largest remote share within RefineTolerance of the fastest rung is
	// kept. Contention is flagged but not re-measured.
	ModeRayD Mode = "rayd"
)

// Constants of the ladder and of its reading.
const (
	// RefineTolerance is RayD's tie-break: a rung within 3% of the
	// fastest one counts as fast, and the largest remote share among those
	// wins.
	RefineTolerance = 0.03
	// NearCrossoverBand is the margin, in percent, inside which a
	// RayD-mode decision flips between runs (3% tolerance + ~2% spread).
	NearCrossoverBand = 5.0
	// DefaultRepeats, DefaultWarmUp: RayD's measured and discarded rounds.
	DefaultRepeats = 3
	DefaultWarmUp  = 1
	// DefaultMaxRounds caps the measured rounds of the noise-aware ladder.
	DefaultMaxRounds = 20
	// DefaultConfidence is the two-sided confidence of the noise-aware
	// comparisons.
	DefaultConfidence = 0.99
	// DefaultContentionTolerance is how far the throughput times of two
	// identical devices may disagree before they are re-measured.
	DefaultContentionTolerance = 0.05
)

// shares is the refinement ladder (Shares).
var shares = [...]float64{1, 0.5, 0.25, 0.1, 0}

// Shares returns the refinement ladder, 1, 1/2, 1/4, 1/10 and 0: every
// remote weight is scaled by each share in turn, the master keeping its
// throughput weight; the last rung is the master alone.
func Shares() []float64 { s := shares; return s[:] }

// Options are the arguments of Calibrate (calibrate_devices's keywords and
// the noise-aware knobs). An unset (zero) number means its default; a
// negative one is an error.
type Options struct {
	// Operation is the key the result is stored under. Empty means
	// DefaultOperation(MaxBounces), which only the built-in probe may use;
	// a custom probe must name its operation.
	Operation string
	// Rows is the probe batch (recorded, and the row count of the
	// built-in probe); 0 means DefaultRows.
	Rows int
	// MaxBounces selects the built-in probe's operation (0: intersect).
	MaxBounces int
	// Repeats is the number of measured rounds of each stage (the
	// minimum of the noise-aware ladder); 0 means DefaultRepeats.
	Repeats int
	// WarmUp is the number of discarded rounds before them; 0 means
	// DefaultWarmUp (set SkipWarmUp for none).
	WarmUp int
	// SkipWarmUp discards no round.
	SkipWarmUp bool
	// SkipRefine keeps the throughput weights (no ladder).
	SkipRefine bool
	// Mode is ModeNoiseAware (default) or ModeRayD.
	Mode Mode
	// Confidence is the two-sided confidence of the noise-aware
	// comparisons, in (0.5, 1); 0 means DefaultConfidence.
	Confidence float64
	// MaxRounds caps the measured rounds of the noise-aware ladder; 0
	// means DefaultMaxRounds. It is raised to Repeats if lower.
	MaxRounds int
	// MaxProbeTime caps the probe time the noise-aware ladder spends (the
	// sum of the durations the probe reported); 0 means no cap.
	MaxProbeTime time.Duration
	// ContentionTolerance is how far (as a fraction) the throughput times
	// of identical devices may disagree; 0 means the default (5%).
	ContentionTolerance float64
	// Identities names each device (in the layer's device order) for the
	// contention check: devices of equal names are compared, so a
	// heterogeneous layer passes its models here (shard.Identity's String,
	// for instance). Nil means the devices are identical, which is what a
	// layer guarantees unless its options allow a heterogeneous set.
	Identities []string
	// Progress, when set, is called on the calibrating goroutine as the
	// calibration advances (see ProgressUpdate); nil keeps it quiet. A
	// command renders it, for instance as a progress bar with an ETA on a
	// terminal: the library draws nothing itself.
	Progress func(ProgressUpdate)
}

// config is Options with the defaults filled in and the target resolved.
type config struct {
	Options
	target string
}

// resolve validates the arguments in the spec's order (§8.1, after the
// device check) and fills in the defaults.
func resolve(p Probe, o Options) (config, error) {
	c := config{Options: o}
	if p == nil {
		return c, &ArgumentError{Field: "probe", Reason: "needs a probe (the built-in one, marked with BuiltIn, or a custom one)"}
	}
	_, isBuiltIn := p.(builtIn)
	def := DefaultOperation(o.MaxBounces)
	switch {
	case !isBuiltIn && o.Operation == "":
		return c, &ArgumentError{Field: "Operation", Kind: ErrProbeNeedsOperation,
			Reason: "operation=... is required with a custom probe: name the operation it measures"}
	case isBuiltIn && o.Operation != "" && o.Operation != def:
		return c, &ArgumentError{Field: "Operation", Kind: ErrRelabelledProbe,
			Reason: fmt.Sprintf("the built-in probe measures %q and cannot be stored as %q; Pass a custom probe", def, o.Operation)}
	}
	c.target = o.Operation
	if c.target == "" {
		c.target = def
	}
	if strings.TrimSpace(c.target) == "" {
		return c, &ArgumentError{Field: "Operation", Kind: ErrEmptyOperation, Reason: "must be a non-empty string"}
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{{"Rows", &c.Rows, DefaultRows}, {"Repeats", &c.Repeats, DefaultRepeats}} {
		if *f.v < 0 {
			return c, &ArgumentError{Field: f.name, Kind: ErrNotPositive,
				Reason: fmt.Sprintf("must be at least 1 (0 means the default), got %d", *f.v)}
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	switch {
	case o.WarmUp < 0:
		return c, &ArgumentError{Field: "WarmUp", Kind: ErrNegative,
			Reason: fmt.Sprintf("must not be negative, got %d", o.WarmUp)}
	case o.SkipWarmUp:
		c.WarmUp = 0
	case o.WarmUp == 0:
		c.WarmUp = DefaultWarmUp
	}
	if o.MaxBounces < 0 {
		return c, &ArgumentError{Field: "MaxBounces", Reason: fmt.Sprintf("must not be negative, got %d", o.MaxBounces), Kind: ErrNegative}
	}
	return c, c.resolveKnobs()
}

// resolveKnobs validates and defaults the noise-aware knobs.
func (c *config) resolveKnobs() error {
	switch c.Mode {
	case "":
		c.Mode = ModeNoiseAware
	case ModeNoiseAware, ModeRayD:
	default:
		return &ArgumentError{Field: "Mode", Reason: fmt.Sprintf("unknown mode %q (want %q or %q)", c.Mode, ModeNoiseAware, ModeRayD)}
	}
	if c.Confidence == 0 {
		c.Confidence = DefaultConfidence
	}
	if math.IsNaN(c.Confidence) || c.Confidence <= 0.5 || c.Confidence >= 1 {
		return &ArgumentError{Field: "Confidence", Reason: fmt.Sprintf("must lie in (0.5, 1), got %v", c.Confidence)}
	}
	if c.MaxRounds < 0 {
		return &ArgumentError{Field: "MaxRounds", Kind: ErrNotPositive,
			Reason: fmt.Sprintf("must be at least 1 (0 means the default), got %d", c.MaxRounds)}
	}
	if c.MaxRounds == 0 {
		c.MaxRounds = DefaultMaxRounds
	}
	c.MaxRounds = max(c.MaxRounds, c.Repeats)
	if c.MaxProbeTime < 0 {
		return &ArgumentError{Field: "MaxProbeTime", Kind: ErrNegative,
			Reason: fmt.Sprintf("must not be negative, got %v", c.MaxProbeTime)}
	}
	if c.ContentionTolerance == 0 {
		c.ContentionTolerance = DefaultContentionTolerance
	}
	if math.IsNaN(c.ContentionTolerance) || c.ContentionTolerance < 0 || math.IsInf(c.ContentionTolerance, 0) {
		return &ArgumentError{Field: "ContentionTolerance", Kind: ErrNegative,
			Reason: fmt.Sprintf("must be a finite fraction ≥ 0, got %v", c.ContentionTolerance)}
	}
	return nil
}
