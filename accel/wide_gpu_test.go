package accel

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ref"
)

// wideScenes are the GPU scenes plus a compute-shaped cloud large enough
// for several wide levels.
func wideScenes(t *testing.T) map[string]*geom.Tables {
	sc := gpuScenes(t)
	compute, _, _ := workload.Compute.Scaled(1 << 14).Build()
	sc["compute"] = tables(t, compute)
	return sc
}

// TestGPUWideBuildMatchesHost: the device collapse (rayd_bvh_collapse_wide,
// rayd_bvh_emit_wide) downloads to exactly the host mirror's Width 8
// layout, nodes, triangle order and height, and the layout validates.
func TestGPUWideBuildMatchesHost(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		for name, tb := range wideScenes(t) {
			for _, opt := range []Options{{Width: 8}, {Width: 8, MaxLeafSize: 1}, {Width: 8, MaxLeafSize: 2, TraversalCost: 3}} {
				bvh, err := BuildWith(s, tb, opt)
				require.NoError(t, err, name)
				got, err := bvh.DownloadLayout(s)
				require.NoError(t, err)
				require.Equal(t, 8, bvh.Width())
				_ = bvh.Close()
				require.NoError(t, Validate(got), "%s %+v: device layout", name, opt)
				want, err := BuildHost(tb, opt)
				require.NoError(t, err)
				require.NoError(t, got.Equal(want), "%s %+v: device vs host", name, opt)
				for k := range want.Order {
					require.Equal(t, want.Order[k], got.Order[k], "%s: order slot %d", name, k)
				}
			}
		}
	})
}

// TestGPUWideIntersectMatchesReference: rayd_intersect8 writes, into
// poisoned outputs and for every flag combination, exactly the words of the
// quad kernel (rayd_intersect4) and the CPU reference's record, with and
// without a persistent counter; the compact records equal the host mirror.
func TestGPUWideIntersectMatchesReference(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		for name, tb := range wideScenes(t) {
			sc, err := ref.NewScene(tb)
			require.NoError(t, err)
			wide, err := BuildWith(s, tb, Options{Width: 8})
			require.NoError(t, err)
			quad, err := BuildWith(s, tb, Options{Width: 4})
			require.NoError(t, err)
			lay, err := wide.DownloadLayout(s)
			require.NoError(t, err)
			o, d, tmax, active := testRays(tb, 4099, 31)
			rb := newRayBatch(t, s, o, d, tmax, active)
			n := rb.dev.N
			for _, flags := range []geom.Flags{geom.FlagsAll, geom.FlagsNone, geom.FlagGeometric, geom.FlagUV | geom.FlagShadingN} {
				label := fmt.Sprintf("%s %s", name, flags)
				want, err := sc.Intersect(o, d, tmax, active, flags)
				require.NoError(t, err)
				got := deviceHits(t, s, n, flags, func(h Hits) error { return wide.Intersect(s, rb.dev, flags, h) })
				compareHits(t, label+" wide", got, want)
				for _, persistent := range []bool{false, true} {
					r := rb.dev
					if persistent {
						r.Counter, r.PersistentBlocks = devOut[uint32](t, s, 1), 3
					}
					hw, hq := poisonedHits(t, s, n), poisonedHits(t, s, n)
					require.NoError(t, wide.Intersect(s, r, flags, hw))
					require.NoError(t, quad.Intersect(s, r, flags, hq))
					requireSameRaw(t, fmt.Sprintf("%s persistent %v: wide vs quad", label, persistent), rawHits(t, s, hw), rawHits(t, s, hq))
				}
			}
			wantC, err := lay.IntersectCompact(o, d, tmax, active)
			require.NoError(t, err)
			out := devOut[uint32](t, s, 4*n)
			require.NoError(t, out.Memset32(s, hitPoison))
			require.NoError(t, wide.IntersectCompact(s, rb.dev, out))
			gotC := download(t, s, out, 4*n)
			for i := range wantC {
				if gotC[i] != wantC[i] {
					t.Fatalf("%s compact word %d: %#08x, host %#08x", name, i, gotC[i], wantC[i])
				}
			}
			_ = wide.Close()
			_ = quad.Close()
		}
	})
}
