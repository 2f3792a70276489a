package accel

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

// TestGPUInstanceUpdatesBackToBack: updates queued back to back, without a
// host wait between them and with queries queued in between, each reuse
// the one staging buffer only after the previous copy has read it: the
// query after every update returns the CPU reference's record for that
// update's transforms bit for bit. An update with another instance count
// is refused and leaves the layer as it was; Close after queued work
// releases everything (the device's allocation count returns to its
// level before the layer).
func TestGPUInstanceUpdatesBackToBack(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := testscene.Rand(t)
		meshes := []geom.Mesh{gridMesh(9, 3), testscene.Sphere([3]float32{0, 0, 0}, 0.4, 12, 9)}
		tb := tables(t, meshes...)
		in := testscene.RandomInstances(r, len(meshes), 300, 1.5)
		x, err := geom.BuildInstances(tb, in)
		require.NoError(t, err)
		o, d, tmax := testscene.RandomRays(r, tb, 4000)
		ao, ad := aimedAtInstances(r, tb, in, 2000)
		o, d = append(o, ao...), append(d, ad...)
		for range 2000 {
			tmax = append(tmax, geom.DefaultTMax)
		}
		rb := newRayBatch(t, s, o, d, tmax, nil)
		n := rb.dev.N
		const rounds = 4
		var ids [rounds]*launch.Buffer[int32]
		var outs [rounds]Hits
		for k := range rounds {
			ids[k] = devOut[int32](t, s, n)
			outs[k] = Hits{T: devOut[float32](t, s, n), P: devOut[float32](t, s, 3*n), N: devOut[float32](t, s, 3*n),
				GeoN: devOut[float32](t, s, 3*n), UV: devOut[float32](t, s, 2*n), Bary: devOut[float32](t, s, 3*n),
				ShapeID: devOut[int32](t, s, n), PrimID: devOut[int32](t, s, n), LocalPrimID: devOut[int32](t, s, n),
				GlobalPrimID: devOut[int32](t, s, n)}
		}
		require.NoError(t, s.Synchronize())
		before, _ := s.Device().Allocated()
		l, err := NewInstanceLayer(s, tb, x, Options{Width: 4})
		require.NoError(t, err)
		closed := false
		defer func() {
			if !closed {
				_ = l.Close()
			}
		}()
		move := func() {
			moved := make([]geom.Transform, x.Len())
			for i := range moved {
				moved[i] = testscene.RandomTransform(r, 1.5)
			}
			require.NoError(t, x.SetTransforms(0, moved))
		}
		var wants [rounds]*geom.Hits
		for k := range rounds {
			// Updates with no host wait since the last copy was queued:
			// two in a row before the query, then the query queued.
			for range 2 {
				move()
				require.NoError(t, l.Update(s, x))
			}
			want, err := ref.NewInstancedScene(context.Background(), tb, x)
			require.NoError(t, err)
			wants[k], err = want.Intersect(context.Background(), o, d, tmax, nil, geom.FlagsAll)
			require.NoError(t, err)
			for _, b := range []*launch.Buffer[float32]{outs[k].T, outs[k].P, outs[k].N, outs[k].GeoN, outs[k].UV, outs[k].Bary} {
				require.NoError(t, b.Memset32(s, 0x7fc00bad))
			}
			for _, b := range []*launch.Buffer[int32]{outs[k].ShapeID, outs[k].PrimID, outs[k].LocalPrimID, outs[k].GlobalPrimID, ids[k]} {
				require.NoError(t, b.Memset32(s, 0x7fc00bad))
			}
			require.NoError(t, l.Intersect(s, rb.dev, geom.FlagsAll, outs[k], ids[k]))
		}
		for k := range rounds {
			got := geom.NewHits(n, geom.FlagsAll)
			got.T, got.P, got.N = download(t, s, outs[k].T, n), download(t, s, outs[k].P, 3*n), download(t, s, outs[k].N, 3*n)
			got.GeoN, got.UV, got.Bary = download(t, s, outs[k].GeoN, 3*n), download(t, s, outs[k].UV, 2*n), download(t, s, outs[k].Bary, 3*n)
			got.ShapeID, got.PrimID = download(t, s, outs[k].ShapeID, n), download(t, s, outs[k].PrimID, n)
			got.LocalPrimID, got.GlobalPrimID = download(t, s, outs[k].LocalPrimID, n), download(t, s, outs[k].GlobalPrimID, n)
			got.InstanceID = download(t, s, ids[k], n)
			require.True(t, testscene.SameHits(wants[k], got), "update %d: first difference at row %d", k, testscene.FirstDiff(wants[k], got))
		}

		fewer := &geom.Instances{Records: x.Records[:x.Len()-1]}
		require.Error(t, l.Update(s, fewer))
		require.Equal(t, x.Len(), l.NumInstances())

		require.NoError(t, l.Close())
		closed = true
		require.NoError(t, l.Close(), "idempotent")
		require.NoError(t, s.Synchronize())
		after, _ := s.Device().Allocated()
		require.Equal(t, before, after, "the layer's device memory is released")
	})
}
