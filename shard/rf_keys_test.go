package shard_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

func cloneStates(st *rf.DfrStates) *rf.DfrStates {
	c := *st
	for _, p := range []*[]float32{&c.EdgePos, &c.EdgeDir, &c.EdgeTMin, &c.EdgeTMax, &c.N0, &c.N1, &c.ExteriorAngle,
		&c.Src, &c.SrcPower, &c.Wi, &c.D0} {
		*p = slices.Clone(*p)
	}
	c.EdgeIndex, c.Prim0, c.Prim1 = slices.Clone(c.EdgeIndex), slices.Clone(c.Prim0), slices.Clone(c.Prim1)
	return &c
}

// TestInputKeysFollowContents: the keys of the replicated RF inputs are
// equal for equal contents in distinct slices and differ when any value,
// length, the material's presence, the active mask or Faces differs; a key
// is computed once per task value.
func TestInputKeysFollowContents(t *testing.T) {
	f := newRFFixture(t, testscene.Rand(t), 300, 60, 3)
	key := func(st *rf.DfrStates, m *rf.DfrMaterial, active []bool, faces int) uint64 {
		return (&shard.AccumDfrDirect{Faces: faces, States: st, Material: m, Active: active}).InputKey()
	}
	base := key(f.states, f.mat, f.active, f.faces)
	require.Equal(t, base, key(cloneStates(f.states), f.mat, slices.Clone(f.active), f.faces), "equal contents")

	seen := map[uint64]string{base: "base"}
	differ := func(what string, k uint64) {
		t.Helper()
		prev, dup := seen[k]
		require.False(t, dup, "%s has the key of %s", what, prev)
		seen[k] = what
	}
	for i, field := range []func(*rf.DfrStates) *float32{
		func(s *rf.DfrStates) *float32 { return &s.EdgePos[1] }, func(s *rf.DfrStates) *float32 { return &s.EdgeTMax[0] },
		func(s *rf.DfrStates) *float32 { return &s.Src[5] }, func(s *rf.DfrStates) *float32 { return &s.SrcPower[2] },
		func(s *rf.DfrStates) *float32 { return &s.ExteriorAngle[1] }, func(s *rf.DfrStates) *float32 { return &s.N1[2] },
	} {
		st := cloneStates(f.states)
		*field(st) += 0.25
		differ("state field "+string(rune('a'+i)), key(st, f.mat, f.active, f.faces))
	}
	st := cloneStates(f.states)
	st.Prim1[0]++
	differ("prim1", key(st, f.mat, f.active, f.faces))
	st = cloneStates(f.states)
	st.EdgeDir = st.EdgeDir[:len(st.EdgeDir)-1]
	differ("a shorter slice", key(st, f.mat, f.active, f.faces))
	differ("the default material", key(f.states, nil, f.active, f.faces))
	m := *f.mat
	m.Valid = slices.Clone(m.Valid)
	m.Valid[3] = !m.Valid[3]
	differ("a material flag", key(f.states, &m, f.active, f.faces))
	active := slices.Clone(f.active)
	active[0] = !active[0]
	differ("the active mask", key(f.states, f.mat, active, f.faces))
	differ("no active mask", key(f.states, f.mat, nil, f.faces))
	differ("faces", key(f.states, f.mat, f.active, f.faces+1))
	require.Equal(t, base, (&shard.AccumDfrCoherentDirect{Faces: f.faces, States: f.states, Material: f.mat,
		Active: f.active}).InputKey(), "both DFR accumulations replicate the same inputs")
	differ("the material of accumulate_reflections", (&shard.AccumulateReflections{Faces: f.faces, Material: f.mat}).MaterialKey())

	task := f.direct()
	k := task.InputKey()
	f.states.EdgePos[0] += 1
	require.Equal(t, k, task.InputKey(), "the key is taken once per task value")
	require.NotEqual(t, k, f.direct().InputKey())
	f.states.EdgePos[0] -= 1

	r := f.reflections()
	mk := r.MaterialKey()
	r2 := f.reflections()
	r2.Rays.O = slices.Clone(r2.Rays.O)
	r2.Rays.O[0] += 1
	require.Equal(t, mk, r2.MaterialKey(), "the rows are not part of the material key")
	r3 := f.reflections()
	r3.Material = nil
	require.NotEqual(t, mk, r3.MaterialKey())
}
