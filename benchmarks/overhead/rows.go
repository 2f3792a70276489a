package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/internal/benchhead"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

// bench runs the rows on one device.
type bench struct {
	clk      *benchhead.Clock
	ordinal  int
	warmup   int
	transfer shard.Transfer
}

// perRayOps are the per_ray rows of a configuration.
func perRayOps(config string) []string {
	if config == workload.Light.Name {
		return []string{opIntersect, opReflect, opVisible}
	}
	return []string{opIntersect}
}

// config runs every row of cfg: its per_ray rows on the configuration's
// mesh and rays, then accum_dfr_direct on the accumulation fixture with the
// configuration's sample count.
func (b *bench) config(ctx context.Context, cfg workload.Config, rounds int) (_ []row, err error) {
	mesh, o, d := cfg.Build()
	p, err := newPair(ctx, []rayd.Mesh{mesh}, b.ordinal, b.transfer)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, p.close()) }()
	var rows []row
	for _, op := range perRayOps(cfg.Name) {
		rays := rayd.Rays{Origins: o, Directions: d}
		if op == opVisible {
			rays = rayd.Rays{Origins: o, Directions: segmentEnds(o, d)}
		}
		r, err := b.perRay(ctx, p, cfg.Name, op, rays, rounds)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", cfg.Name, op, err)
		}
		rows = append(rows, r)
	}
	r, err := b.accum(ctx, cfg.Name, cfg.AccumSamples, rounds)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", cfg.Name, opAccum, err)
	}
	return append(rows, r), nil
}

// segmentEnds are the ends of the visibility segments: every ray's origin
// plus its unit direction.
func segmentEnds(o, d []float32) []float32 {
	e := make([]float32, len(o))
	for i := range e {
		e[i] = o[i] + d[i]
	}
	return e
}

// perRay times op on both scenes of p in interleaved rounds, then runs one
// call of each on poisoned outputs, counting its driver calls, and compares
// every field of every row.
func (b *bench) perRay(ctx context.Context, p *pair, config, op string, rays rayd.Rays, rounds int) (_ row, err error) {
	r := row{Op: op, Config: config, Rows: rays.Len()}
	single, err := newResident(ctx, p.single, op, rays)
	if err != nil {
		return r, err
	}
	defer func() { err = errors.Join(err, single.close()) }()
	repl, err := newResident(ctx, p.repl, op, rays)
	if err != nil {
		return r, err
	}
	defer func() { err = errors.Join(err, repl.close()) }()
	times, err := b.clk.Interleaved(b.warmup, rounds, single.call(ctx), repl.call(ctx))
	if err != nil {
		return r, err
	}
	r.setTimes(times[0], times[1])
	if err := errors.Join(single.poison(singlePoison), repl.poison(replPoison)); err != nil {
		return r, err
	}
	if r.Measured.Single, err = counted(single.call(ctx)); err != nil {
		return r, err
	}
	if r.Measured.Replicated, err = counted(repl.call(ctx)); err != nil {
		return r, err
	}
	dispatched(&r, p.repl)
	ws, err := single.words()
	if err != nil {
		return r, err
	}
	wr, err := repl.words()
	if err != nil {
		return r, err
	}
	var fs []field
	for i, o := range single.outputs() {
		fs = append(fs, field{Name: o.name, PerRow: o.perRow, Bytes: o.u8 != nil, Single: ws[i], Repl: wr[i]})
	}
	if r.Check, err = compareFields(rays.Len(), fs); err != nil {
		return r, err
	}
	r.judge()
	return r, nil
}

// accum times accum_dfr_direct with samples direct samples on the
// accumulation fixture of `rayd bench` on both scenes, then runs one
// counted call of each and compares the results. Its outputs are host
// records the call allocates: there is nothing to poison.
func (b *bench) accum(ctx context.Context, config string, samples, rounds int) (_ row, err error) {
	r := row{Op: opAccum, Config: config, Samples: samples}
	tri, st, g := testscene.AccumFixture()
	opt := testscene.AccumOptions(samples)
	p, err := newPair(ctx, []rayd.Mesh{tri}, b.ordinal, b.transfer)
	if err != nil {
		return r, err
	}
	defer func() { err = errors.Join(err, p.close()) }()
	var want, got *rf.AccumResult
	call := func(s *rayd.Scene, out **rf.AccumResult) func() error {
		return func() error {
			res, err := s.AccumDfrDirect(ctx, st, g, nil, nil, opt)
			*out = res
			return err
		}
	}
	times, err := b.clk.Interleaved(b.warmup, rounds, call(p.single, &want), call(p.repl, &got))
	if err != nil {
		return r, err
	}
	r.setTimes(times[0], times[1])
	want, got = nil, nil
	if r.Measured.Single, err = counted(call(p.single, &want)); err != nil {
		return r, err
	}
	if r.Measured.Replicated, err = counted(call(p.repl, &got)); err != nil {
		return r, err
	}
	dispatched(&r, p.repl)
	if r.Check, err = compareAccum(want, got); err != nil {
		return r, err
	}
	r.judge()
	return r, nil
}
