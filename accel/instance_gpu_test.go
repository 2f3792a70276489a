package accel

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

// instancedDeviceHits runs the layer's intersect into a full record whose
// every buffer is first poisoned with a NaN pattern, and downloads it with
// the instance ids.
// The persistent launch (a small grid of warps taking 32-row batches) must
// write the same record: it is compared with the one-row-per-thread launch.
func instancedDeviceHits(t *testing.T, s *launch.Stream, l *InstanceLayer, rb *rayBatch, flags geom.Flags) *geom.Hits {
	t.Helper()
	h := instancedRun(t, s, l, rb.dev, flags)
	pr := rb.dev
	pr.Counter, pr.PersistentBlocks = devOut[uint32](t, s, 1), 3
	p := instancedRun(t, s, l, pr, flags)
	compareHits(t, "persistent instanced intersect", p, h)
	require.Equal(t, h.InstanceID, p.InstanceID, "persistent instanced intersect: instance ids")
	return h
}

// instancedRun is one instanced intersect of r into poisoned outputs.
func instancedRun(t *testing.T, s *launch.Stream, l *InstanceLayer, r Rays, flags geom.Flags) *geom.Hits {
	t.Helper()
	n := r.N
	ids := devOut[int32](t, s, n)
	h := deviceHits(t, s, n, flags, func(out Hits) error {
		for _, b := range []*launch.Buffer[float32]{out.T, out.P, out.N, out.GeoN, out.UV, out.Bary} {
			require.NoError(t, b.Memset32(s, 0x7fc00bad))
		}
		for _, b := range []*launch.Buffer[int32]{out.ShapeID, out.PrimID, out.LocalPrimID, out.GlobalPrimID, ids} {
			require.NoError(t, b.Memset32(s, 0x7fc00bad))
		}
		return l.Intersect(s, r, flags, out, ids)
	})
	if flags.Has(geom.FlagGeometric) {
		h.InstanceID = download(t, s, ids, n)
	}
	return h
}

// TestGPUInstancedIntersectMatchesReference: the two-level walk returns the
// CPU reference's record bit for bit (instance ids included) over mixed
// geometries, random affine transforms, coincident copies and both BLAS
// layouts, before and after a transform update.
func TestGPUInstancedIntersectMatchesReference(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := testscene.Rand(t)
		meshes := []geom.Mesh{gridMesh(9, 3), cloudMesh(3000, 0.1, 4), testscene.Sphere([3]float32{0, 0, 0}, 0.4, 12, 9)}
		tb := tables(t, meshes...)
		for _, count := range []int{1, 3, 40, 700} {
			in := testscene.RandomInstances(r, len(meshes), count, 1.5)
			if count > 3 {
				in = append(in, in[2], in[2]) // coincident copies: ties to the lower id
			}
			x, err := geom.BuildInstances(tb, in)
			require.NoError(t, err)
			want, err := ref.NewInstancedScene(context.Background(), tb, x)
			require.NoError(t, err)
			// A batch of random rays, rays through the volume and rays
			// aimed at the instances of placement p.
			batch := func(p []geom.Instance) (o, d, tmax []float32, rb *rayBatch) {
				o, d, tmax = testscene.RandomRays(r, tb, 6000)
				vo, vd := workload.VolumeRays(6000, uint64(count))
				ao, ad := aimedAtInstances(r, tb, p, 3000)
				o, d = append(append(o, vo...), ao...), append(append(d, vd...), ad...)
				tmax = append(tmax, make([]float32, 9000)...)
				for i := 6000; i < len(tmax); i++ {
					tmax[i] = geom.DefaultTMax
				}
				return o, d, tmax, newRayBatch(t, s, o, d, tmax, nil)
			}
			o, d, tmax, rb := batch(in)
			for _, width := range []int{2, 4} {
				t.Run(fmt.Sprintf("instances=%d/width=%d", len(in), width), func(t *testing.T) {
					l, err := NewInstanceLayer(s, tb, x, Options{Width: width})
					require.NoError(t, err)
					defer l.Close()
					check := func(what string, o, d, tmax []float32, rb *rayBatch) {
						ref, err := want.Intersect(context.Background(), o, d, tmax, nil, geom.FlagsAll)
						require.NoError(t, err)
						got := instancedDeviceHits(t, s, l, rb, geom.FlagsAll)
						require.True(t, testscene.SameHits(ref, got), "%s: first difference at row %d", what, testscene.FirstDiff(ref, got))
						hits := 0
						for i := range ref.Len() {
							if ref.Valid(i) {
								hits++
							}
						}
						require.Greater(t, hits, len(o)/30, "%s: the rays must hit", what)
					}
					check("built", o, d, tmax, rb)
					moved := make([]geom.Transform, x.Len())
					placed := append([]geom.Instance(nil), in...)
					for i := range moved {
						moved[i] = testscene.RandomTransform(r, 1.5)
						placed[i].Transform = moved[i]
					}
					old := x.Clone()
					require.NoError(t, x.SetTransforms(0, moved))
					require.NoError(t, l.Update(s, x))
					mo, md, mt, mb := batch(placed)
					check("updated", mo, md, mt, mb)
					*x = *old
				})
			}
		}
	})
}

// aimedAtInstances draws n rays from points around the instances (taken in
// turn) toward each instance's world-space vertex centroid, so that a scene
// of few instances, which random rays may miss, is hit by a share of the
// batch whatever the instances' transforms.
func aimedAtInstances(r *rand.Rand, tb *geom.Tables, in []geom.Instance, n int) (o, d []float32) {
	o, d = make([]float32, 0, 3*n), make([]float32, 0, 3*n)
	for i := range n {
		x := in[i%len(in)]
		m := x.Geometry
		var c [3]float64
		lo, hi := tb.VertexOffset[m], int32(tb.NumVertices())
		if m+1 < len(tb.VertexOffset) {
			hi = tb.VertexOffset[m+1]
		}
		for v := lo; v < hi; v++ {
			for k := range 3 {
				c[k] += float64(tb.Vertices[3*v+int32(k)])
			}
		}
		var w [3]float64
		for k := range 3 {
			c[k] /= float64(hi - lo)
		}
		for k := range 3 {
			tr := x.Transform[4*k : 4*k+4]
			w[k] = float64(tr[0])*c[0] + float64(tr[1])*c[1] + float64(tr[2])*c[2] + float64(tr[3])
		}
		u := [3]float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
		l := math.Sqrt(u[0]*u[0] + u[1]*u[1] + u[2]*u[2])
		for k := range 3 {
			o = append(o, float32(w[k]+3*u[k]/l))
			d = append(d, float32(-u[k]/l))
		}
	}
	return o, d
}
