package rf

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// screenFixture is a conducting half-plane screen (y = 0, x ∈ [0, 5]) whose
// edge is the z axis, two states on that edge and three receivers: lit,
// shadowed, and hidden behind a small blocker (face 2).
func screenFixture(t testing.TB) (*TablesScene, *DfrStates, *DfrMaterial, []float32) {
	sc := sceneOf(t,
		[9]float32{0, 0, -5, 5, 0, -5, 5, 0, 5},
		[9]float32{0, 0, -5, 5, 0, 5, 0, 0, 5},
		[9]float32{-1.5, -0.5, -2, -1.5, 0.5, -2, -1.5, 0, 2},
	)
	st := &DfrStates{
		EdgeIndex: []int32{40, 41}, EdgePos: []float32{0, 0, 0, 0, 0, 1}, EdgeDir: []float32{0, 0, 1, 0, 0, 2},
		EdgeTMin: []float32{-5, -6}, EdgeTMax: []float32{5, 4},
		N0: []float32{0, 1, 0, 0, 1, 0}, N1: []float32{0, -1, 0, 0, -1, 0},
		Prim0: []int32{0, 0}, Prim1: []int32{1, 1},
		ExteriorAngle: []float32{2 * math.Pi, 2 * math.Pi},
		Src:           []float32{1, 1.7, 0.5, 1.2, 1.5, -0.3}, SrcPower: []float32{1, 4},
	}
	m := uniformMaterial(3, 1, 1e7)
	rx := []float32{
		float32(3 * math.Cos(2.6)), float32(3 * math.Sin(2.6)), 0.2, // lit
		float32(3 * math.Cos(5.3)), float32(3 * math.Sin(5.3)), -0.4, // shadow
		-3, 0, 0.3, // behind the blocker
	}
	return sc, st, m, rx
}

var txTwo = []float32{9, 9, 9, -7, 3, 1}

func TestTraceDfrPathsSourceLane(t *testing.T) {
	sc, st, m, rx := screenFixture(t)
	opt := DefaultPathOptions()
	opt.Layout = SourceLane
	opt.Wavelength = 0.5
	p, err := TraceDfrPaths(sc, txTwo, rx, st, m, []bool{true, true}, opt)
	require.NoError(t, err)
	require.Equal(t, 12, p.Capacity) // T·R·M = 2·3·2
	require.Equal(t, int32(8), p.Count)
	for g := range 12 {
		tx, r, s := PathLane(uint32(g), 2, 3)
		if r == 2 { // hidden behind the blocker: inert row
			assert.False(t, p.Valid[g])
			assert.Equal(t, []int32{-1, -1, 0, -1}, []int32{p.TxID[g], p.RxID[g], p.Order[g], p.Edge0[g]})
			assert.Zero(t, p.Delay[g])
			assert.Equal(t, []float64{0, 0, 0}, p.P0[3*g:3*g+3])
			continue
		}
		require.True(t, p.Valid[g], "lane %d", g)
		assert.Equal(t, []int32{int32(tx), int32(r), 1, 40 + int32(s), -1, -1},
			[]int32{p.TxID[g], p.RxID[g], p.Order[g], p.Edge0[g], p.Edge1[g], p.Edge2[g]})
		// p0 is the stationary point on the edge (inside the edge here).
		src := row3f(st.Src, s)
		rxp := row3f(rx, r)
		e := row3f(st.EdgeDir, s).normalize()
		origin := row3f(st.EdgePos, s).add(e.scale(float64(st.EdgeTMin[s])))
		q := origin.add(e.scale(StationaryParameter(src, rxp, origin, e)))
		assert.InDeltaSlice(t, q[:], p.P0[3*g:3*g+3], 1e-12)
		assert.Equal(t, []float64{0, 0, 0}, p.P1[3*g:3*g+3])
		assert.InDelta(t, (q.sub(src).norm()+rxp.sub(q).norm())/SpeedOfLight, p.Delay[g], 1e-20)
		// The field scales with √src_power and is non-zero in the shadow too.
		f := cvec{complex(p.FieldXRe[g], p.FieldXIm[g]), complex(p.FieldYRe[g], p.FieldYIm[g]), complex(p.FieldZRe[g], p.FieldZIm[g])}
		assert.Positive(t, f.power())
	}
	// Both transmitters carry the same physics (the source is states.src).
	for g := range 6 {
		assert.Equal(t, p.FieldXRe[g], p.FieldXRe[g+6])
		assert.Equal(t, p.FieldZIm[g], p.FieldZIm[g+6])
	}
}

func TestTraceDfrPathsCompactAndTxIndependence(t *testing.T) {
	sc, st, m, rx := screenFixture(t)
	opt := DefaultPathOptions()
	opt.TxPolarization = []float32{0, 0, 1}
	compact, err := TraceDfrPaths(sc, txTwo, rx, st, m, []bool{true, true}, opt)
	require.NoError(t, err)
	opt.Layout = SourceLane
	lanes, err := TraceDfrPaths(sc, txTwo, rx, st, m, []bool{true, true}, opt)
	require.NoError(t, err)
	assert.Equal(t, lanes.Count, compact.Count)
	row := 0
	for g := range lanes.Capacity {
		if !lanes.Valid[g] {
			continue
		}
		assert.Equal(t, lanes.TxID[g], compact.TxID[row])
		assert.Equal(t, lanes.FieldZRe[g], compact.FieldZRe[row])
		assert.Equal(t, lanes.P0[3*g:3*g+3], compact.P0[3*row:3*row+3])
		row++
	}
	for ; row < compact.Capacity; row++ {
		assert.False(t, compact.Valid[row])
	}
	// Transmitter positions are ignored; a per-transmitter polarization
	// equal to the broadcast one changes nothing.
	opt.TxPolarization = []float32{0, 0, 1, 0, 0, 1}
	moved, err := TraceDfrPaths(sc, []float32{0, 0, 0, 1, 2, 3}, rx, st, m, []bool{true, true}, opt)
	require.NoError(t, err)
	assert.Equal(t, lanes, moved)
	// An inactive state leaves its lanes inert; the state limit shrinks M.
	opt.MaxPaths = 1
	one, err := TraceDfrPaths(sc, txTwo, rx, st, m, []bool{true}, opt)
	require.NoError(t, err)
	assert.Equal(t, 6, one.Capacity)
	assert.Equal(t, int32(4), one.Count)
	for g := range 6 {
		assert.Equal(t, lanes.FieldZRe[2*g], one.FieldZRe[g])
	}
	opt.MaxPaths = 0
	off, err := TraceDfrPaths(sc, txTwo, rx, st, m, []bool{false, true}, opt)
	require.NoError(t, err)
	assert.Equal(t, int32(4), off.Count)
}

// Sharding by transmitter blocks (multidevice §7.3): concatenating the
// SourceLane shards and offsetting tx ids reproduces the single call.
func TestTraceDfrPathsTxShards(t *testing.T) {
	sc, st, m, rx := screenFixture(t)
	opt := DefaultPathOptions()
	opt.Layout = SourceLane
	tx := []float32{0, 0, 0, 1, 1, 1, 2, 2, 2}
	full, err := TraceDfrPaths(sc, tx, rx, st, m, []bool{true, true}, opt)
	require.NoError(t, err)
	merged, err := TraceDfrPaths(sc, tx[:3], rx, st, m, []bool{true, true}, opt)
	require.NoError(t, err)
	rest, err := TraceDfrPaths(sc, tx[3:], rx, st, m, []bool{true, true}, opt)
	require.NoError(t, err)
	require.NoError(t, merged.AppendShard(rest, 1))
	assert.Equal(t, full, merged)
	require.Error(t, merged.AppendShard(NewDfrPaths(0, Compact), 3))
}

func TestTraceDfrPathsSkips(t *testing.T) {
	sc, st, m, rx := screenFixture(t)
	bad := *st
	bad.Src = []float32{float32(math.NaN()), 0, 0, 1.2, 1.5, -0.3}
	p, err := TraceDfrPaths(sc, txTwo[:3], rx[:3], &bad, m, []bool{true, true}, DefaultPathOptions())
	require.NoError(t, err)
	assert.Equal(t, int32(1), p.Count) // only state 1 survives
	short := *st
	short.EdgeTMax = []float32{-5, 4}
	p, err = TraceDfrPaths(sc, txTwo[:3], rx[:3], &short, m, []bool{true, true}, DefaultPathOptions())
	require.NoError(t, err)
	assert.Equal(t, int32(1), p.Count)
	empty, err := TraceDfrPaths(sc, nil, rx, st, m, []bool{true, true}, DefaultPathOptions())
	require.NoError(t, err)
	assert.Zero(t, empty.Capacity)
}
