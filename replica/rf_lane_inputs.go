package replica

import (
	"fmt"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

// The inputs of the resident RF calls (see laneState): the replicated
// inputs of a call are packed and uploaded only when they differ from the
// resident ones (by content key, geometry version and row count); a
// reflection window's rays are uploaded per launch into the grow-only row
// buffers, all float32 columns in one copy.

// resident makes the job's replicated inputs resident on s: the packed
// states of a DFR accumulation (against the replica's own tables) or the
// packed face material of accumulate_reflections. It packs and uploads
// nothing when they already are (a failed upload leaves them invalid).
func (st *laneState) resident(s *launch.Stream, j *laneJob) error {
	r := st.r
	if j.refl != nil {
		k := inputsKey{key: j.refl.MaterialKey(), rows: r.faces()}
		if st.matOK && st.matKey == k {
			return nil
		}
		st.matOK = false
		m := accel.PackFaceMaterial(j.refl.Material, k.rows)
		if err := grow(s, &st.material, len(m)); err != nil {
			return err
		}
		if err := uploadAll(s, st.material, m); err != nil {
			return err
		}
		st.matKey, st.matOK = k, true
		r.stats.uploaded.Add(int64(4 * len(m)))
		return nil
	}
	states, m, active, key := j.states()
	if states == nil {
		return fmt.Errorf("replica: %s without states", j.task.Op().Key)
	}
	k := inputsKey{key: key, version: r.Version(), rows: states.StateCount()}
	if st.statesOK && st.statesKey == k {
		return nil
	}
	st.statesOK = false
	st.packed = r.packStatesInto(st.packed, states, k.rows, m, active)
	if err := grow(s, &st.states, len(st.packed)); err != nil {
		return err
	}
	if err := uploadAll(s, st.states, st.packed); err != nil {
		return err
	}
	st.statesKey, st.statesOK = k, true
	r.stats.uploaded.Add(int64(4 * len(st.packed)))
	return nil
}

// packStatesInto packs the first n states against the replica's own tables
// into dst (accel.PackDfrStatesInto).
func (r *Replica) packStatesInto(dst []uint32, st *rf.DfrStates, n int, m *rf.DfrMaterial, active []bool) []uint32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return accel.PackDfrStatesInto(dst, st, n, m, active, r.tables.NumFaces(), r.tables.Triangle)
}

// uploadAll queues the copy of src into b on s (nothing for an empty src).
func uploadAll[T launch.Elem](s *launch.Stream, b *launch.Buffer[T], src []T) error {
	if len(src) == 0 {
		return nil
	}
	return b.Upload(s, src)
}

// reflRows uploads the rays of rows [lo, hi) of t on s into the row
// buffers and returns the launch over them: origins, directions and
// transmitter positions (and, when given, tmax and polarization) packed
// into one float32 upload, the active mask into a second one.
func (st *laneState) reflRows(s *launch.Stream, t *shard.AccumulateReflections, lo, hi int) (accel.ReflAccumLaunch, error) {
	rays := t.Window(lo, hi)
	n := hi - lo
	cols := [][]float32{rays.O, rays.D, rays.TxPosition, rays.TMax, rays.TxPolarization}
	total := 0
	for _, c := range cols {
		total += len(c)
	}
	st.rowHost = growHost(st.rowHost, total)
	in := accel.ReflAccumLaunch{N: n, Material: st.material, NumFaces: st.matKey.rows, Grid: t.Grid,
		MaxBounces: t.MaxBounces, Options: t.Options}
	if err := grow(s, &st.rows, total); err != nil {
		return in, err
	}
	views := []**launch.Buffer[float32]{&in.O, &in.D, &in.TxPosition, &in.TMax, &in.TxPolarization}
	off := 0
	for i, c := range cols {
		if len(c) == 0 && i >= 3 {
			continue // tmax and polarization are optional; the others are required, if empty
		}
		copy(st.rowHost[off:], c)
		v, err := st.rows.View(off, len(c))
		if err != nil {
			return in, err
		}
		*views[i] = v
		off += len(c)
	}
	if err := uploadAll(s, st.rows, st.rowHost); err != nil {
		return in, err
	}
	bytes := int64(4 * total)
	if len(rays.Active) > 0 {
		st.activeHost = growHost(st.activeHost, n)
		for i, a := range rays.Active {
			st.activeHost[i] = 0
			if a {
				st.activeHost[i] = 1
			}
		}
		if err := grow(s, &st.active, n); err != nil {
			return in, err
		}
		if err := uploadAll(s, st.active, st.activeHost); err != nil {
			return in, err
		}
		v, err := st.active.View(0, n)
		if err != nil {
			return in, err
		}
		in.Active, bytes = v, bytes+int64(n)
	}
	st.r.stats.uploaded.Add(bytes)
	return in, nil
}
