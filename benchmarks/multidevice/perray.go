package multidevice

import (
	"context"
	"fmt"
	"math"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/benchmarks"
	"github.com/rayd-go/rayd/calibrate"
	"github.com/rayd-go/rayd/launch"
)

// poison is written over every output before a row runs: a NaN no kernel
// produces, so a row left unwritten is caught by the agreement check.
const poison = 0x7fc00bad

// variant is one scene of a row with its resident inputs and outputs.
type variant struct {
	s    *rayd.Scene
	rays *rayd.DeviceRays
	hits *rayd.DeviceHits
	refl *rayd.DeviceReflections
}

func (v *variant) close() {
	for _, c := range []interface{ Close() error }{v.hits, v.refl, v.rays} {
		if c != nil {
			_ = c.Close()
		}
	}
}

// newVariant uploads the rays to s's (master) device and allocates the
// intersect record and a reflections record of bounces slots.
func newVariant(ctx context.Context, s *rayd.Scene, rays rayd.Rays, bounces int) (_ *variant, err error) {
	v := &variant{s: s}
	defer func() {
		if err != nil {
			v.close()
		}
	}()
	if v.rays, err = s.UploadRays(ctx, rays); err != nil {
		return nil, err
	}
	if v.hits, err = s.AllocHits(rays.Len(), rayd.FlagsAll); err != nil {
		return nil, err
	}
	if bounces > 0 {
		if v.refl, err = s.AllocReflections(rays.Len(), bounces, false); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func (v *variant) intersect(ctx context.Context) func() error {
	return func() error { return v.s.IntersectInto(ctx, v.rays, v.hits) }
}

func (v *variant) reflect(ctx context.Context) func() error {
	return func() error { return v.s.TraceReflectionsInto(ctx, v.rays, v.refl) }
}

// poisonT fills the t output of the operation with the poison pattern.
func poisonT(b *launch.Buffer[float32]) error {
	st, err := b.Device().NewStream()
	if err != nil {
		return err
	}
	defer st.Close()
	if err := b.Memset32(st, poison); err != nil {
		return err
	}
	return st.Synchronize()
}

func downloadT(b *launch.Buffer[float32]) ([]float32, error) {
	st, err := b.Device().NewStream()
	if err != nil {
		return nil, err
	}
	defer st.Close()
	out := make([]float32, b.Len())
	return out, b.Download(st, out)
}

// agreement is the fraction of elements whose bit patterns match; a
// poison value left in either output is an error (a row nobody wrote).
func agreement(a, b []float32) (float64, error) {
	if len(a) != len(b) {
		return 0, fmt.Errorf("%w: %d against %d elements", ErrMismatch, len(a), len(b))
	}
	same := 0
	for i := range a {
		x, y := math.Float32bits(a[i]), math.Float32bits(b[i])
		if x == poison || y == poison {
			return 0, fmt.Errorf("%w: element %d was never written", ErrMismatch, i)
		}
		if x == y {
			same++
		}
	}
	if len(a) == 0 {
		return 1, nil
	}
	return float64(same) / float64(len(a)), nil
}

// tOf is the t buffer a row's operation writes.
func tOf(v *variant, reflect bool) *launch.Buffer[float32] {
	if reflect {
		return v.refl.T
	}
	return v.hits.T
}

// perRayRow times one per_ray operation on the single-device variant and
// every multi-device variant (interleaved), checks the agreement of t and
// fills the row. vs[0] is the single device, vs[len-1] the full set.
func (r *configRun) perRayRow(ctx context.Context, vs []*variant, reflect bool) (*benchmarks.Row, error) {
	fns := make([]func() error, len(vs))
	for i, v := range vs {
		if err := poisonT(tOf(v, reflect)); err != nil {
			return nil, err
		}
		if reflect {
			fns[i] = v.reflect(ctx)
		} else {
			fns[i] = v.intersect(ctx)
		}
	}
	times, err := interleaved(r.c, r.o.Warmup, r.o.Repeat, fns...)
	if err != nil {
		return nil, err
	}
	row := r.newRow(times[0], fmt.Sprintf("%d rays", r.cfg.Rays), r.cfg.Rays)
	want, err := downloadT(tOf(vs[0], reflect))
	if err != nil {
		return nil, err
	}
	for i := 1; i < len(vs); i++ {
		got, err := downloadT(tOf(vs[i], reflect))
		if err != nil {
			return nil, err
		}
		a, err := agreement(want, got)
		if err != nil {
			return nil, err
		}
		if a != 1 {
			return nil, fmt.Errorf("%w: %s %s on %d devices: %.6f of t bitwise equal", ErrMismatch, r.cfg.Name, opName(reflect), len(vs[i].s.Devices()), a)
		}
		r.addMulti(row, vs[i].s, times[i], i == len(vs)-1)
		if i == len(vs)-1 {
			row.BitwiseAgreement = &a
		}
	}
	return row, nil
}

func opName(reflect bool) string {
	if reflect {
		return "trace_reflections"
	}
	return "intersect"
}

// calibratedRow calibrates the full-set scene for the operation at the
// calibration batch, then re-times it against one device.
func (r *configRun) calibratedRow(ctx context.Context, single, multi *variant, reflect bool) (*benchmarks.Row, error) {
	bounces := 0
	if reflect {
		bounces = r.cfg.MaxBounces
	}
	rows := r.o.CalibrationRays
	if rows == 0 {
		rows = r.cfg.Rays
	}
	rec, err := multi.s.Calibrate(ctx, rayd.CalibrateOptions{Options: calibrate.Options{Rows: rows, MaxBounces: bounces,
		Repeats: r.o.CalibrationRepeats, Mode: r.o.CalibrationMode, Progress: r.o.CalibrationProgress}})
	if err != nil {
		return nil, fmt.Errorf("calibrating %s %s: %w", r.cfg.Name, opName(reflect), err)
	}
	row, err := r.perRayRow(ctx, []*variant{single, multi}, reflect)
	if err != nil {
		return nil, err
	}
	calibrated(row, rec)
	return row, nil
}

// calibrated adds a calibration record's fields to a re-timed row.
func calibrated(row *benchmarks.Row, rec *rayd.CalibrationRecord) {
	row.Weights = rec.Weights
	row.ProbeSeconds = rec.Seconds
	row.CandidateWeights = rec.Candidates
	for _, s := range rec.CandidateSeconds {
		row.CandidateMS = append(row.CandidateMS, s*1e3)
	}
	row.Describe = rec.String()
	row.Calibration = rec
	row.Margin = benchmarks.MarginOf(rec.Candidates, row.CandidateMS, rec.Weights)
	if row.Margin != nil && rec.Mode == calibrate.ModeNoiseAware {
		// The noise-aware reading of the same ladder: a margin inside the
		// measured spread is what NEAR-CROSSOVER means there.
		row.Margin.NearCrossover = rec.NearCrossover
	}
}
