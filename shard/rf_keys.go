package shard

import (
	"encoding/binary"
	"hash/maphash"
	"math"

	"github.com/rayd-go/rayd/rf"
)

// Input keys of the grid_reduce RF tasks. A replica that keeps a call's
// replicated inputs resident on its device (ResidentLanes) reuses them for
// the next call whose key and geometry version are those of the previous
// one. Slice identity proves nothing (a caller may change a slice in
// place), so the key is a digest of the contents: every value of every
// input, with the lengths that delimit them, hashed with hash/maphash under
// a seed drawn once per process (keys are compared within the process
// only). Two different inputs share a key with probability about 2⁻⁶⁴.
//
// Cost: the states are 28 values per state (112 bytes), hashed at the
// speed of maphash plus one store per value; packing them (the replica's
// 96-word record per state, with the material, the suffix candidates and
// their triangles resolved and the kernels' float64 per-state invariants
// evaluated) costs several times as much (package replica's
// BenchmarkInputKey and BenchmarkPackDfrStates, 100 000 states, measure
// both). A hit also saves the upload of the 38.4 MB of records.

// keySeed seeds every input key of this process.
var keySeed = maphash.MakeSeed()

// digest hashes values through a small buffer (maphash takes bytes).
type digest struct {
	h   maphash.Hash
	buf [8192]byte
	n   int
}

func newDigest() *digest {
	d := &digest{}
	d.h.SetSeed(keySeed)
	return d
}

func (d *digest) flush() {
	_, _ = d.h.Write(d.buf[:d.n]) // maphash.Hash.Write never fails
	d.n = 0
}

// room flushes unless k more bytes fit.
func (d *digest) room(k int) {
	if d.n+k > len(d.buf) {
		d.flush()
	}
}

// u64 adds one value (a length, a flag or a count).
func (d *digest) u64(v uint64) {
	d.room(8)
	binary.LittleEndian.PutUint64(d.buf[d.n:], v)
	d.n += 8
}

// f32 adds a length and then the bit patterns of v.
func (d *digest) f32(v []float32) {
	d.u64(uint64(len(v)))
	for len(v) > 0 {
		d.room(16)
		k := min(len(v)/4, (len(d.buf)-d.n)/16)
		if k == 0 { // fewer than four values left
			for _, x := range v {
				d.u32(math.Float32bits(x))
			}
			return
		}
		b, src := d.buf[d.n:d.n+16*k], v[:4*k]
		for i := range k { // four values per step through fixed-size views: no per-value bounds check
			s, w := (*[4]float32)(src[4*i:]), (*[16]byte)(b[16*i:])
			binary.LittleEndian.PutUint64(w[0:8], uint64(math.Float32bits(s[0]))|uint64(math.Float32bits(s[1]))<<32)
			binary.LittleEndian.PutUint64(w[8:16], uint64(math.Float32bits(s[2]))|uint64(math.Float32bits(s[3]))<<32)
		}
		d.n += 16 * k
		v = v[4*k:]
	}
}

// i32 adds a length and then the values of v.
func (d *digest) i32(v []int32) {
	d.u64(uint64(len(v)))
	for len(v) > 0 {
		d.room(16)
		k := min(len(v)/4, (len(d.buf)-d.n)/16)
		if k == 0 {
			for _, x := range v {
				d.u32(uint32(x))
			}
			return
		}
		b, src := d.buf[d.n:d.n+16*k], v[:4*k]
		for i := range k {
			s, w := (*[4]int32)(src[4*i:]), (*[16]byte)(b[16*i:])
			binary.LittleEndian.PutUint64(w[0:8], uint64(uint32(s[0]))|uint64(uint32(s[1]))<<32)
			binary.LittleEndian.PutUint64(w[8:16], uint64(uint32(s[2]))|uint64(uint32(s[3]))<<32)
		}
		d.n += 16 * k
		v = v[4*k:]
	}
}

// u32 adds one 32-bit value.
func (d *digest) u32(v uint32) {
	d.room(4)
	binary.LittleEndian.PutUint32(d.buf[d.n:], v)
	d.n += 4
}

// flags adds a length and then one byte per value.
func (d *digest) flags(v []bool) {
	d.u64(uint64(len(v)))
	for _, x := range v {
		d.room(1)
		d.buf[d.n] = 0
		if x {
			d.buf[d.n] = 1
		}
		d.n++
	}
}

// sum returns the digest of everything added.
func (d *digest) sum() uint64 {
	d.flush()
	return d.h.Sum64()
}

// states adds every slice of st (nil adds a marker of its own).
func (d *digest) states(st *rf.DfrStates) {
	if st == nil {
		d.u64(0)
		return
	}
	d.u64(1)
	d.i32(st.EdgeIndex)
	for _, v := range [][]float32{st.EdgePos, st.EdgeDir, st.EdgeTMin, st.EdgeTMax, st.N0, st.N1} {
		d.f32(v)
	}
	d.i32(st.Prim0)
	d.i32(st.Prim1)
	for _, v := range [][]float32{st.ExteriorAngle, st.Src, st.SrcPower, st.Wi, st.D0} {
		d.f32(v)
	}
}

// material adds a material table (nil, the default material, adds a
// marker of its own).
func (d *digest) material(m *rf.DfrMaterial) {
	if m == nil {
		d.u64(0)
		return
	}
	d.u64(1)
	for _, v := range [][]float32{m.EtaR, m.Sigma, m.MuR, m.Gain} {
		d.f32(v)
	}
	d.flags(m.Valid)
}

// dfrInputKey is the key of a DFR accumulation's replicated inputs. Both
// accumulations pack them alike, so it does not depend on the operation.
func dfrInputKey(faces int, st *rf.DfrStates, m *rf.DfrMaterial, active []bool) uint64 {
	d := newDigest()
	_, _ = d.h.WriteString("dfr")
	d.u64(uint64(faces))
	d.states(st)
	d.material(m)
	d.flags(active)
	return d.sum()
}

// InputKey returns the key of the inputs every device receives whole (the
// states, the material, the active mask and Faces): equal for equal
// contents (also between accum_dfr_direct and accum_dfr_coherent_direct,
// which replicate them alike), different (up to a 2⁻⁶⁴ chance) when any
// value changed, in place or not. It is computed on the first call and kept in t, so one
// call's replicas share it: change the inputs only between calls (a layer
// call works on its own copy of the task).
func (t *AccumDfrDirect) InputKey() uint64 {
	if !t.keyed {
		t.key, t.keyed = dfrInputKey(t.Faces, t.States, t.Material, t.Active), true
	}
	return t.key
}

// InputKey is AccumDfrDirect.InputKey for accum_dfr_coherent_direct.
func (t *AccumDfrCoherentDirect) InputKey() uint64 {
	if !t.keyed {
		t.key, t.keyed = dfrInputKey(t.Faces, t.States, t.Material, t.Active), true
	}
	return t.key
}

// MaterialKey returns the key of the material every device receives whole
// (with Faces), as AccumDfrDirect.InputKey; the ray rows are not part of it.
func (t *AccumulateReflections) MaterialKey() uint64 {
	if !t.keyed {
		d := newDigest()
		_, _ = d.h.WriteString(OpAccumulateReflections)
		d.u64(uint64(t.Faces))
		d.material(t.Material)
		t.key, t.keyed = d.sum(), true
	}
	return t.key
}
