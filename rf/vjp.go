package rf

import "math"

// DfrGrads are the gradients of a scalar loss with respect to the
// differentiable inputs of accum_dfr_direct (spec §6.2, §11), one row per
// state (vectors 3 per state) and one entry per material row.
type DfrGrads struct {
	EdgePos, EdgeDir   []float64
	EdgeTMin, EdgeTMax []float64
	ExteriorAngle      []float64
	Src                []float64
	SrcPower           []float64
	// Wi is always zero: the forward reads the Keller incidence from
	// normalize(Q − src), not from states.wi.
	Wi []float64
	// MaterialGain has one entry per material row (per scene face for the
	// default material).
	MaterialGain []float64
}

// AccumDfrDirectVJP is the vector–Jacobian product of AccumDfrDirect: given
// the cotangents gradPower and gradFieldXRe of its Power and FieldXRe grids
// (C values each, or empty for zero), it returns the gradient of
// Σ gradPower·Power + gradFieldXRe·FieldXRe with respect to edge_pos,
// edge_dir, edge_t_min, edge_t_max, exterior_angle, src, src_power (and
// wi) of every state and the gain of every material row.
//
// The derivative is the frozen-winner one: each lane of the window replays
// the forward with its state, cell, kind, random draws, suffix face and
// visibility fixed, and pushes ḡc = gradPower[cell] + gradFieldXRe[cell]·½/√c
// through its contribution c, including the motion of a Keller lane's
// target and measure and of a suffix lane's reflection point. The clamps of
// the forward pass no gradient where they are active: exterior angle only
// for π/4 < ext < 4π, gain only for raw gain > 0, edge length only for
// t_max > t_min. Scene geometry is not differentiated. The arguments are
// validated as by AccumDfrDirect.
func AccumDfrDirectVJP(sc Scene, st *DfrStates, g DfrGrid, m *DfrMaterial, active []bool, opt AccumOptions, gradPower, gradFieldXRe []float64) (*DfrGrads, error) {
	const op = "accum_dfr_direct_vjp"
	c, err := newDirectCall(op, sc, st, g, m, active, opt)
	if err != nil {
		return nil, err
	}
	for _, v := range []struct {
		name string
		n    int
	}{{"grad_power", len(gradPower)}, {"grad_field_x_re", len(gradFieldXRe)}} {
		if v.n != 0 && v.n != c.grid.cells {
			return nil, newErr(op, v.name, ErrLength, "must cover grid cells (%d values, %d cells)", v.n, c.grid.cells)
		}
	}
	S := len(c.states)
	out := &DfrGrads{
		EdgePos: make([]float64, 3*S), EdgeDir: make([]float64, 3*S), EdgeTMin: make([]float64, S),
		EdgeTMax: make([]float64, S), ExteriorAngle: make([]float64, S), Src: make([]float64, 3*S),
		SrcPower: make([]float64, S), Wi: make([]float64, 3*S), MaterialGain: make([]float64, c.mat.n),
	}
	if S == 0 {
		return out, nil
	}
	for l := c.lo; l < c.hi; l++ {
		ln := c.lane(uint32(l))
		if ln.outcome != outCommit {
			continue
		}
		gc := 0.0
		if len(gradPower) > 0 {
			gc += gradPower[ln.cell]
		}
		if len(gradFieldXRe) > 0 {
			gc += gradFieldXRe[ln.cell] * 0.5 / math.Sqrt(ln.c)
		}
		if gc == 0 {
			continue
		}
		d := c.laneDual(ln)
		s := ln.s
		for k := range 3 {
			out.EdgePos[3*s+k] += gc * d.d[pEdgePos+k]
			out.EdgeDir[3*s+k] += gc * d.d[pEdgeDir+k]
			out.Src[3*s+k] += gc * d.d[pSrc+k]
		}
		out.EdgeTMin[s] += gc * d.d[pTMin]
		out.EdgeTMax[s] += gc * d.d[pTMax]
		out.ExteriorAngle[s] += gc * d.d[pExt]
		out.SrcPower[s] += gc * d.d[pPower]
		st := &c.states[s]
		if idx := c.mat.gainIndex(st.prim0, st.prim1); idx >= 0 {
			out.MaterialGain[idx] += gc * d.d[pGain]
		}
		if ln.kind == LaneSuffix && ln.face >= 0 {
			out.MaterialGain[ln.face] += gc * d.d[pFaceGain]
		}
	}
	return out, nil
}

// laneDual recomputes the contribution of a committed lane with dual
// numbers, its discrete choices frozen; its value equals ln.c.
func (c *directCall) laneDual(ln laneResult) dual {
	st := &c.states[ln.s]
	pos := dvecVar(st.pos, pEdgePos)
	e := dvecVar(st.dir, pEdgeDir).normalize()
	tmin, tmax := dvar(st.tmin, pTMin), dvar(st.tmax, pTMax)
	src := dvecVar(st.src, pSrc)
	q := pos.add(e.mul(tmin.add(tmax.sub(tmin).scale(ln.u))))
	t := dvecConst(c.grid.center(ln.cell))
	n := c.D
	measure := dconst(1)
	switch ln.kind {
	case LaneKeller:
		n = c.K
		t, measure = c.kellerDual(q, e, src, ln.phi)
	case LaneSuffix:
		n = c.X
		var r dvec
		r, measure = c.suffixDual(q, t, ln)
		t = r
	}
	wEdge := tmax.sub(tmin).maxc(0).scale(float64(len(c.states)) / math.Max(float64(n), 1))
	sd := q.sub(src).norm().maxc(epsSmall)
	td := t.sub(q).norm().maxc(epsSmall)
	wedge := dvar(st.ext, pExt).maxc(math.Pi / 4).scale(1 / (2 * math.Pi)).minc(2)
	gain := dconst(1)
	if idx := c.mat.gainIndex(st.prim0, st.prim1); idx >= 0 {
		gain = dvar(c.mat.rawGain(idx), pGain).maxc(0)
	}
	num := dvar(st.power, pPower).mul(gain).mul(wEdge).mul(wedge).scale(sq(c.lambda/(4*math.Pi)) * c.grid.area)
	return num.div(sd.mul(sd).mul(td).mul(td)).mul(measure)
}

// kellerDual is kellerHit with dual numbers (cell and φ frozen).
func (c *directCall) kellerDual(q, e, src dvec, phi float64) (dvec, dual) {
	g := c.grid
	inc := q.sub(src).normalize()
	a := inc.dot(e)
	if a.v <= -1 || a.v >= 1 {
		a = dconst(math.Min(math.Max(a.v, -1), 1))
	}
	r := dconst(1).sub(a.mul(a)).maxc(0).sqrt()
	b0 := e.stablePerp(inc)
	b1 := e.cross(b0).normalize()
	sn, cs := math.Sincos(phi)
	k := e.mul(a).add(b0.scale(cs).add(b1.scale(sn)).mul(r)).normalize()
	den := k[g.axis]
	t := dconst(g.pos).sub(q[g.axis]).div(den)
	target := q.add(k.mul(t))
	dk := b0.scale(-sn).add(b1.scale(cs)).mul(r)
	ut := e.sub(k.mul(e[g.axis].div(den)))
	uphi := dk.sub(k.mul(dk[g.axis].div(den))).mul(t)
	m := ut.cross(uphi).norm().scale(2 * math.Pi / math.Max(g.area, epsSmall))
	return target, m
}

// suffixDual is the suffix connection with dual numbers (face frozen): it
// returns the reflection point R and the factor gain²·(λ/4π)²/max(|T−R|²,
// 1e-6)·count.
func (c *directCall) suffixDual(q, t dvec, ln laneResult) (dvec, dual) {
	p0, e1, e2, n := c.tr.triangle(ln.face)
	dp0, dn := dvecConst(p0), dvecConst(n)
	img := q.sub(dn.mul(q.sub(dp0).dot(dn).scale(2)))
	delta := t.sub(img)
	dir := delta.mul(dconst(1).div(delta.norm()))
	de1, de2 := dvecConst(e1), dvecConst(e2)
	h := dir.cross(de2)
	fa := dconst(1).div(de1.dot(h))
	qv := img.sub(dp0).cross(de1)
	r := img.add(dir.mul(fa.mul(de2.dot(qv))))
	out := t.sub(r)
	gain := dvar(c.mat.rawGain(ln.face), pFaceGain).maxc(0)
	fspl := dconst(sq(c.lambda / (4 * math.Pi))).div(out.dot(out).maxc(epsSmall))
	return r, gain.mul(gain).mul(fspl).scale(math.Max(ln.count, 1))
}
