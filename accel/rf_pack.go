package accel

import (
	"math"

	"github.com/rayd-go/rayd/rf"
)

// PTX module of the RF kernels (ptx/src/<module>.cu).
const (
	ModuleRFAccum = "rf_accum" // accum_dfr_direct, accum_dfr_coherent_direct, float64 → float32 grids
	ModuleRFRefl  = "rf_refl"  // accumulate_reflections
	ModuleRFPaths = "rf_paths" // trace_dfr_paths
)

// Packed record sizes (they mirror ptx/src/rf_common.cuh, rf_refl.cu and
// rf_paths.cu).
const (
	// DfrStateWords is the size of one packed diffraction state in 32-bit
	// words (see PackDfrStates): 60 words of inputs, 4 of padding, then
	// float64 per-state invariants (words 64 onward, two words each, low
	// word first).
	DfrStateWords = 96
	// FaceMaterialWords is the size of one packed face material (eta_r,
	// sigma, mu_r, gain, valid as 0 or 1), float32 each.
	FaceMaterialWords = 5
	// WedgeEventWords is the size of one reflection event row: ray, prim,
	// depth, 0, hit xyz, normal xyz, incoming dir xyz, image source xyz,
	// source power, initial dir xyz (ids int32, the rest float32).
	WedgeEventWords = 20
	// PathRowWords is the size of one path row: valid, tx, rx, order, edge0,
	// edge1, edge2 (int32), delay, field x re/im, y re/im, z re/im, p0 xyz,
	// p1 xyz, p2 xyz (float32), 0.
	PathRowWords = 24
)

// Word offsets of a packed state (rf_common.cuh RFS_*).
const (
	stPos, stDir, stTMin, stTMax, stN0, stN1, stExt, stSrc, stPower, stGain = 0, 3, 6, 7, 8, 11, 14, 15, 18, 19
	stEdge, stActive, stPrim0, stPrim1, stSuffixN, stSuffixFace             = 20, 21, 22, 23, 24, 25
	stSuffixGain, stSuffixTri, stFaceMat                                    = 28, 32, 50
	// float64 invariants (rf_common.cuh RFS_D_*): the unit edge direction,
	// its renormalization, tmax − tmin, power·gain and the wedge factor.
	stDirUnit, stDirUnit2, stSpan, stPowerGain, stWedge = 64, 70, 76, 78, 80
)

// TriangleFunc returns the vertices of global face f.
type TriangleFunc func(f int) (p0, p1, p2 [3]float32)

// PackDfrStates packs the first n states of st (validated by package rf:
// every slice covers n rows) into n records of DfrStateWords words, with
// everything a lane reads resolved on the host: the active flag (active is
// empty, one broadcast flag or one per state), the state's material gain
// (rf's prim0-else-prim1 rule, clamped at 0, 1 without a valid row), the
// suffix candidates {prim0, prim1 ≠ prim0} that are scene faces with a
// valid material row, with their gains and triangles, the UTD face
// materials of prim0 and prim1, and the float64 per-state invariants of
// the accumulation kernels (unit edge direction and its renormalization,
// tmax − tmin, power·gain, the wedge factor), evaluated as the kernels
// would, bit for bit. m nil is the default material over faces
// faces; tri gives the triangles of the scene's faces (only called for
// suffix candidates; it may be nil when faces is 0).
func PackDfrStates(st *rf.DfrStates, n int, m *rf.DfrMaterial, active []bool, faces int, tri TriangleFunc) []uint32 {
	return PackDfrStatesInto(nil, st, n, m, active, faces, tri)
}

// PackDfrStatesInto is PackDfrStates writing into dst, which it grows when
// it holds fewer than n·DfrStateWords words; it returns the packed records
// (a prefix of dst or of its replacement).
func PackDfrStatesInto(dst []uint32, st *rf.DfrStates, n int, m *rf.DfrMaterial, active []bool, faces int, tri TriangleFunc) []uint32 {
	out := dst
	if cap(out) < n*DfrStateWords {
		out = make([]uint32, n*DfrStateWords)
	}
	out = out[:n*DfrStateWords]
	clear(out)
	f := math.Float32bits
	matRows := faces
	if m != nil {
		matRows = len(m.Gain)
	}
	valid := func(p int32) bool { return p >= 0 && int(p) < matRows && (m == nil || m.Valid[p]) }
	gain := func(p int32) float32 {
		if m == nil {
			return 1
		}
		return max(m.Gain[p], 0)
	}
	for i := range n {
		w := out[i*DfrStateWords : (i+1)*DfrStateWords]
		for k := range 3 {
			w[stPos+k], w[stDir+k] = f(st.EdgePos[3*i+k]), f(st.EdgeDir[3*i+k])
			w[stN0+k], w[stN1+k], w[stSrc+k] = f(st.N0[3*i+k]), f(st.N1[3*i+k]), f(st.Src[3*i+k])
		}
		w[stTMin], w[stTMax], w[stExt], w[stPower] = f(st.EdgeTMin[i]), f(st.EdgeTMax[i]), f(st.ExteriorAngle[i]), f(st.SrcPower[i])
		p0, p1 := st.Prim0[i], st.Prim1[i]
		g := float32(1)
		if valid(p0) {
			g = gain(p0)
		} else if valid(p1) {
			g = gain(p1)
		}
		w[stGain] = f(g)
		w[stEdge], w[stPrim0], w[stPrim1] = uint32(st.EdgeIndex[i]), uint32(p0), uint32(p1)
		if isActive(active, i) {
			w[stActive] = 1
		}
		cand := func(p int32) bool { return p >= 0 && int(p) < faces && valid(p) }
		slots := 0
		for _, p := range []int32{p0, p1} {
			if !cand(p) || (slots == 1 && p == p0) {
				continue
			}
			w[stSuffixFace+slots], w[stSuffixGain+slots] = uint32(p), f(gain(p))
			a, b, c := tri(int(p))
			for k := range 3 {
				w[stSuffixTri+9*slots+k], w[stSuffixTri+9*slots+3+k], w[stSuffixTri+9*slots+6+k] = f(a[k]), f(b[k]), f(c[k])
			}
			slots++
		}
		w[stSuffixN] = uint32(slots)
		putInvariants(w, st, i, g)
		for k, p := range []int32{p0, p1} {
			if !valid(p) {
				continue
			}
			mw := w[stFaceMat+5*k : stFaceMat+5*k+5]
			mw[0] = 1
			if m == nil {
				mw[1], mw[2], mw[3], mw[4] = f(1), f(0), f(1), f(1)
			} else {
				mw[1], mw[2], mw[3], mw[4] = f(m.EtaR[p]), f(m.Sigma[p]), f(m.MuR[p]), f(gain(p))
			}
		}
	}
	return out
}

func isActive(active []bool, s int) bool {
	switch len(active) {
	case 0:
		return true
	case 1:
		return active[0]
	}
	return active[s]
}

// PackFaceMaterial packs a per-face material (validated by package rf: one
// row per scene face) as FaceMaterialWords float32 per face; m nil is the
// default material (1, 0, 1, 1, valid) over faces faces.
func PackFaceMaterial(m *rf.DfrMaterial, faces int) []float32 {
	out := make([]float32, faces*FaceMaterialWords)
	for i := range faces {
		w := out[i*FaceMaterialWords : (i+1)*FaceMaterialWords]
		if m == nil {
			w[0], w[1], w[2], w[3], w[4] = 1, 0, 1, 1, 1
			continue
		}
		w[0], w[1], w[2], w[3] = m.EtaR[i], m.Sigma[i], m.MuR[i], m.Gain[i]
		if m.Valid[i] {
			w[4] = 1
		}
	}
	return out
}
