package main

import (
	"errors"
	"time"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/launch"
)

// peer is a fixture on another device that takes a share of the
// brute-force check: its own edge BVH over the same edges (its own record
// order; the brute force's answer does not depend on it) and its own copies
// of the batches, by their rows (batch.rows: a query's rows as drawn or as
// sorted by -orders).
type peer struct {
	f       *fixture
	batches map[string]*batch
}

func newPeer(ordinal int, es *edge.Scene, bs []*batch, n int) (_ *peer, err error) {
	d, err := launch.Open(ordinal)
	if err != nil {
		return nil, err
	}
	p := &peer{f: &fixture{d: d, n: n}, batches: map[string]*batch{}}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	if p.f.s, err = d.NewStream(); err != nil {
		return nil, err
	}
	if p.f.bvh, err = accel.BuildEdges(p.f.s, es.Tables.Vertices, accel.EdgeTablesOf(es.Edges)); err != nil {
		return nil, err
	}
	for _, b := range bs {
		c := &batch{name: b.rows, base: b.base, rows: b.rows, p: b.p, d: b.d, tmax: b.tmax}
		if err := p.f.upload(c); err != nil {
			return nil, err
		}
		p.batches[b.rows] = c
	}
	return p, p.f.allocOut()
}

func (p *peer) close() {
	p.f.close()
	if p.f.bvh != nil {
		_ = p.f.bvh.Close()
	}
	if p.f.s != nil {
		_ = p.f.s.Close()
	}
	_ = p.f.d.Close()
}

// bruteOnAll runs the brute force over b's first m rows split in
// contiguous parts over f and its peers, all devices at once, and returns
// the rows and the wall-clock milliseconds.
func (f *fixture) bruteOnAll(b *batch, m int, ray bool) (*edge.RayResult, float64, error) {
	parts := 1 + len(f.peers)
	type share struct {
		f      *fixture
		b      *batch
		lo, hi int
	}
	shares := []share{{f: f, b: b}}
	for _, p := range f.peers {
		shares = append(shares, share{f: p.f, b: p.batches[b.rows]})
	}
	for j := range shares {
		shares[j].lo, shares[j].hi = j*m/parts, (j+1)*m/parts
	}
	t0 := time.Now()
	for _, sh := range shares {
		if err := sh.f.poison(1); err != nil {
			return nil, 0, err
		}
		if err := sh.f.launchRange(sh.b, sh.lo, sh.hi, 1, true); err != nil {
			return nil, 0, err
		}
	}
	res := edge.NewRayResult(m)
	var errs []error
	for _, sh := range shares {
		errs = append(errs, sh.f.downloadRange(1, sh.lo, sh.hi, ray, res))
	}
	return res, float64(time.Since(t0).Microseconds()) / 1e3, errors.Join(errs...)
}
