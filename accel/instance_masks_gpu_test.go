package accel

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

// TestGPUInstancedMaskedIntersectMatchesReference: the instanced intersect
// with per-ray tmin and masks, instance masks (record word 22) and mesh
// masks (SetMeshMasks) returns the CPU reference's record bit for bit,
// every output poisoned first, for both BLAS layouts: the masked kernels
// with limits or mesh masks, the unmasked ones with instance masks alone,
// before and after a transform update, and the default answer again once
// every mask is reset.
func TestGPUInstancedMaskedIntersectMatchesReference(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		ctx := context.Background()
		r := testscene.Rand(t)
		meshes := []geom.Mesh{gridMesh(9, 3), cloudMesh(3000, 0.1, 4), testscene.Sphere([3]float32{0, 0, 0}, 0.4, 12, 9)}
		tb := tables(t, meshes...)
		in := testscene.RandomInstances(r, len(meshes), 300, 1.5)
		in = append(in, in[2], in[2]) // coincident copies: ties to the lowest visible id
		x, err := geom.BuildInstances(tb, in)
		require.NoError(t, err)
		instMasks := testscene.RandomInstanceMasks(r, x.Len())
		instMasks[2], instMasks[len(in)-1] = 0x02, 0x01
		meshMasks := []uint8{0x03, 0xFF, 0x05}
		want, err := ref.NewInstancedScene(ctx, tb, x)
		require.NoError(t, err)
		o, d, tmax := testscene.RandomRays(r, tb, 6000)
		ao, ad := aimedAtInstances(r, tb, in, 6000)
		o, d = append(o, ao...), append(d, ad...)
		for range 6000 {
			tmax = append(tmax, geom.DefaultTMax)
		}
		tmin, mask := testscene.RandomLimits(r, len(tmax), tmax)
		rb := newRayBatch(t, s, o, d, tmax, nil)
		dTMin, dMask := devBuf(t, s, tmin), devBuf(t, s, mask)
		cases := []struct {
			what string
			rays Rays
			lim  geom.RayLimits
		}{{"no limits", rb.dev, geom.RayLimits{}},
			{"tmin+mask", withLimits(rb.dev, dTMin, dMask), geom.RayLimits{TMin: tmin, Mask: mask}},
			{"tmin", withLimits(rb.dev, dTMin, nil), geom.RayLimits{TMin: tmin}},
			{"mask", withLimits(rb.dev, nil, dMask), geom.RayLimits{Mask: mask}}}
		for _, width := range []int{2, 4} {
			t.Run(fmt.Sprintf("width=%d", width), func(t *testing.T) {
				for i := range x.Records {
					require.NoError(t, x.SetMask(i, instMasks[i]))
				}
				for m, v := range meshMasks {
					require.NoError(t, tb.SetMask(m, v))
				}
				l, err := NewInstanceLayer(s, tb, x, Options{Width: width})
				require.NoError(t, err)
				defer l.Close()
				require.Error(t, l.SetMeshMasks(s, []uint8{1}), "one mask per geometry")
				require.NoError(t, l.SetMeshMasks(s, tb.Mask))
				require.True(t, l.MeshMasked())
				check := func(what string) {
					t.Helper()
					for _, c := range cases {
						exp, err := want.IntersectLimits(ctx, o, d, tmax, nil, c.lim, geom.FlagsAll)
						require.NoError(t, err)
						got := instancedDeviceHits(t, s, l, &rayBatch{dev: c.rays}, geom.FlagsAll)
						require.True(t, testscene.SameHits(exp, got), "%s, %s: first difference at row %d", what, c.what, testscene.FirstDiff(exp, got))
						hits := 0
						for i := range exp.Len() {
							if exp.Valid(i) {
								hits++
							}
						}
						require.Greater(t, hits, len(tmax)/40, "%s, %s: the rays must hit", what, c.what)
					}
				}
				check("mesh and instance masks")
				moved := make([]geom.Transform, x.Len())
				for i := range moved {
					moved[i] = testscene.RandomTransform(r, 1.5)
				}
				old := x.Clone()
				require.NoError(t, x.SetTransforms(0, moved))
				require.NoError(t, l.Update(s, x))
				check("transforms updated")

				// Instance masks alone: the unmasked kernels for rays without limits.
				for m := range meshMasks {
					require.NoError(t, tb.SetMask(m, geom.DefaultMask))
				}
				require.NoError(t, l.SetMeshMasks(s, tb.Mask))
				require.False(t, l.MeshMasked())
				require.False(t, l.maskedFor(rb.dev))
				check("instance masks alone")

				// Every mask back to the default: the plain answer.
				for i := range x.Records {
					require.NoError(t, x.SetMask(i, geom.DefaultMask))
				}
				require.NoError(t, l.Update(s, x))
				exp, err := want.Intersect(ctx, o, d, tmax, nil, geom.FlagsAll)
				require.NoError(t, err)
				got := instancedDeviceHits(t, s, l, rb, geom.FlagsAll)
				require.True(t, testscene.SameHits(exp, got), "reset: first difference at row %d", testscene.FirstDiff(exp, got))
				*x = *old
			})
		}
	})
}
