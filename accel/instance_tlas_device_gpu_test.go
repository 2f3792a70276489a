package accel

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
)

// launchTLASRound queues rayd_tlas_round: the device's outward float32
// roundings of x[0..n).
func launchTLASRound(run runner, x *launch.Buffer[float64], n int, down, up *launch.Buffer[uint32]) error {
	k := &kernelLauncher{r: run, module: ModuleTLASBuild}
	k.run("rayd_tlas_round", launch.Blocks(n, 256), launch.Threads(256), x, int32(n), down, up)
	return k.err
}

// tlasSizes are the instance counts of the device build's checks: every
// count up to 80, the powers of two and their neighbours up to
// TLASDeviceMax, and random counts.
func tlasSizes(r *rand.Rand) []int {
	var sizes []int
	for n := 1; n <= 80; n++ {
		sizes = append(sizes, n)
	}
	for p := 128; p <= TLASDeviceMax; p *= 2 {
		sizes = append(sizes, p-1, p, min(p+1, TLASDeviceMax))
	}
	for range 40 {
		sizes = append(sizes, 1+r.IntN(TLASDeviceMax))
	}
	return sizes
}

// tlasFarCase is tlasCase with translations near the float32 range's
// ends: boxes whose outward rounding overflows to ±MaxFloat32 and ±Inf,
// and translations among the float32 subnormals.
func tlasFarCase(t *testing.T, r *rand.Rand, n int) (*geom.Instances, [][3]float64, [][3]float64) {
	t.Helper()
	x, lo, hi := tlasCase(t, r, n)
	far := []float32{math.MaxFloat32, -math.MaxFloat32, 1e38, -3e38, 1e-40, -1e-44, 0}
	moved := make([]geom.Transform, n)
	for i := range moved {
		moved[i] = x.Records[i].Transform
		for k := range 3 {
			if r.IntN(2) == 0 {
				moved[i][4*k+3] = far[r.IntN(len(far))]
			}
		}
	}
	require.NoError(t, x.SetTransforms(0, moved))
	return x, lo, hi
}

// TestGPUTLASBuildMatchesHost: rayd_tlas_build writes BuildTLAS's nodes
// and leaf order word for word, into poisoned buffers, for random instance
// sets with centroid ties (tlasCase) of every size class from 1 to
// TLASDeviceMax, and sets placed near the float32 range's ends
// (tlasFarCase).
func TestGPUTLASBuildMatchesHost(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := testscene.Rand(t)
		const poison = 0xdeadbeef
		sizes := tlasSizes(r)
		for k, n := range append(sizes, 1, 2, 7, 100, TLASDeviceMax) {
			x, lo, hi := tlasCase(t, r, n)
			if k >= len(sizes) {
				x, lo, hi = tlasFarCase(t, r, n)
			}
			want := BuildTLAS(x, lo, hi)
			nodes := len(want.Nodes)
			// The scratch is poisoned too (Memset32 takes 4-byte elements:
			// the float64 centroids are uploaded as poison words).
			cent := make([]float64, 3*n)
			for i := range cent {
				cent[i] = math.Float64frombits(poison<<32 | poison)
			}
			a := tlasDeviceArgs{inst: devBuf(t, s, InstanceRecords(x)), objs: devBuf(t, s, objectBoxData(lo, hi)),
				nodes: devOut[uint32](t, s, nodes), order: devOut[int32](t, s, n),
				cent: devBuf(t, s, cent), box: devOut[uint32](t, s, tlasBoxWords*n)}
			require.NoError(t, a.nodes.Memset32(s, poison))
			require.NoError(t, a.order.Memset32(s, poison))
			require.NoError(t, a.box.Memset32(s, poison))
			require.NoError(t, launchTLASBuild(streamRunner{s}, a, n))
			got, order := download(t, s, a.nodes, nodes), download(t, s, a.order, n)
			if i := sameInts(got, want.Nodes); i >= 0 {
				t.Fatalf("n=%d: node %d word %d: got %#x, want %#x", n, i/NodeWords, i%NodeWords, got[i], want.Nodes[i])
			}
			if i := sameInts(order, want.Order); i >= 0 {
				t.Fatalf("n=%d: order[%d]: got %d, want %d", n, i, order[i], want.Order[i])
			}
			require.Equal(t, want.Scale, tlasScale(x), "n=%d", n)
		}
	})
}

// TestGPUTLASRoundingMatchesHost: the device's outward roundings
// (__double2float_rd/ru) are down32 and up32 bit for bit on signed zeros,
// float32 subnormals and their neighbours, values below the smallest
// subnormal, the float32 overflow threshold on both sides, infinities and
// random values over the whole float64 exponent range.
func TestGPUTLASRoundingMatchesHost(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := testscene.Rand(t)
		sub := float64(math.SmallestNonzeroFloat32)
		mx := float64(math.MaxFloat32)
		xs := []float64{0, math.Copysign(0, -1), sub, sub / 2, sub / 3, sub * 1.5, sub * 3, 1e-300, 1e-50,
			float64(math.Float32frombits(0x007fffff)), float64(math.Float32frombits(0x00800000)), 1.0 / 3,
			1, mx, mx * (1 + 0x1p-30), mx * (1 + 0x1p-25), mx * (1 + 0x1p-24), mx * 2, 1e39, 1e300,
			math.Inf(1), math.Nextafter(1, 2), math.Nextafter(1, 0)}
		for _, v := range xs[:len(xs):len(xs)] {
			xs = append(xs, -v)
		}
		for range 4000 {
			xs = append(xs, math.Float64frombits(r.Uint64()&^(0x7ff<<52)|uint64(r.IntN(0x7ff))<<52))
		}
		n := len(xs)
		down, up := devOut[uint32](t, s, n), devOut[uint32](t, s, n)
		require.NoError(t, down.Memset32(s, 0xdeadbeef))
		require.NoError(t, up.Memset32(s, 0xdeadbeef))
		require.NoError(t, launchTLASRound(streamRunner{s}, devBuf(t, s, xs), n, down, up))
		gd, gu := download(t, s, down, n), download(t, s, up, n)
		for i, v := range xs {
			require.Equal(t, down32(v), gd[i], "down32(%g)", v)
			require.Equal(t, up32(v), gu[i], "up32(%g)", v)
		}
	})
}

// TestGPUInstanceLayerTopLevel: a layer's top level after creation and
// after transform updates is BuildTLAS's word for word, built on the
// device up to TLASDeviceMax instances and on the host above, and
// LastUpdate says which.
func TestGPUInstanceLayerTopLevel(t *testing.T) {
	forEachDevice(t, func(t *testing.T, s *launch.Stream) {
		r := testscene.Rand(t)
		for _, n := range []int{1, 2, 300, 1024, TLASDeviceMax, TLASDeviceMax + 1} {
			tb, x := tlasCaseTables(t, r, n)
			lo, hi := ObjectBounds(tb)
			l, err := NewInstanceLayer(s, tb, x, Options{Width: 2})
			require.NoError(t, err)
			for round := range 3 {
				if round > 0 {
					moved := make([]geom.Transform, n)
					for i := range moved {
						moved[i] = testscene.RandomTransform(r, 1.5)
					}
					require.NoError(t, x.SetTransforms(0, moved))
					require.NoError(t, l.tlas.Memset32(s, 0xdeadbeef))
					require.NoError(t, l.order.Memset32(s, 0xdeadbeef))
					require.NoError(t, l.Update(s, x))
				}
				want := BuildTLAS(x, lo, hi)
				require.Equal(t, n <= TLASDeviceMax, l.LastUpdate().DeviceBuild, "n=%d", n)
				require.Equal(t, want.Scale, l.scale, "n=%d round %d", n, round)
				got, order := download(t, s, l.tlas, len(want.Nodes)), download(t, s, l.order, n)
				if i := sameInts(got, want.Nodes); i >= 0 {
					t.Fatalf("n=%d round %d: node %d word %d: got %#x, want %#x", n, round, i/NodeWords, i%NodeWords, got[i], want.Nodes[i])
				}
				require.Equal(t, want.Order, order, "n=%d round %d", n, round)
			}
			require.NoError(t, l.Close())
		}
	})
}

// BenchmarkGPUTLASBuild times rayd_tlas_build over the instanced
// benchmark's 1,024 instances (launch and completion, records already on
// the device).
func BenchmarkGPUTLASBuild(b *testing.B) {
	o := gputest.MustHaveDevices(b, 1)[0]
	s := deviceStream(b, o)
	x, lo, hi := benchInstances(b)
	n := x.Len()
	a := tlasDeviceArgs{inst: devBuf(b, s, InstanceRecords(x)), objs: devBuf(b, s, objectBoxData(lo, hi)),
		nodes: devOut[uint32](b, s, NodeWords*TLASNodeCount(n)), order: devOut[int32](b, s, n),
		cent: devOut[float64](b, s, 3*n), box: devOut[uint32](b, s, tlasBoxWords*n)}
	run := func() {
		if err := launchTLASBuild(streamRunner{s}, a, n); err != nil {
			b.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			b.Fatal(err)
		}
	}
	run() // loads the module
	for b.Loop() {
		run()
	}
}
