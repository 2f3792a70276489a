package rayd_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/calibrate"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/shard"
)

// The device fast paths of a 2-GPU scene run through the layer (rays and
// records on the master) and agree bit for bit with the host paths of a
// 1-GPU scene; poisoned outputs are all overwritten.
func TestGPUReplicatedFastPathsAreBitwiseOneGPU(t *testing.T) {
	devs, same := gputest.ReplicaDevices(t)
	auto := shard.PathPeerDirect // intersect on one GPU named twice; compact across two GPUs
	if !same {
		auto = shard.PathCompact
	}
	for _, c := range []struct {
		transfer    shard.Transfer
		mode        shard.Mode
		path, other shard.Path // intersect's path, and that of the other operations
	}{
		{shard.TransferAuto, shard.ModeSharded, auto, shard.PathPeerDirect},
		{shard.TransferPeerDirect, shard.ModeSharded, shard.PathPeerDirect, shard.PathPeerDirect},
		{shard.TransferCompact, shard.ModeSharded, shard.PathCompact, shard.PathPeerDirect},
		{shard.TransferCopy, shard.ModePipelined, shard.PathCopy, shard.PathCopy},
	} {
		t.Run(string(c.transfer)+"/"+string(c.path), func(t *testing.T) {
			fastPathsAreBitwiseOneGPU(t, devs, same, c.transfer, c.mode, c.path, c.other)
		})
	}
}

func fastPathsAreBitwiseOneGPU(t *testing.T, devs []int, same bool, tr shard.Transfer, mode shard.Mode, path, other shard.Path) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(testscene.Seed(t), 13))
	meshes := []rayd.Mesh{testscene.Soup(r, 20000, 0.02), testscene.Grid(48, 2, -0.5)}
	meshes[1].Dynamic = true
	one, err := rayd.NewScene(ctx, meshes, rayd.WithBackend(rayd.BackendCUDA))
	require.NoError(t, err)
	defer one.Close()
	two, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(devs...),
		rayd.WithMultiDevice(rayd.MultiDeviceOptions{MinRaysPerDevice: 1024, AllowSameDevice: same, Transfer: tr}))
	require.NoError(t, err)
	defer two.Close()
	tb, err := geom.BuildTables(meshes)
	require.NoError(t, err)
	o, d, _ := testscene.RandomRays(r, tb, 150001)
	rays := rayd.Rays{Origins: o, Directions: d}
	n := rays.Len()

	dr, dh, got := intersectInto(t, two, rays)
	assert.Equal(t, mode, two.LastDispatch().Mode)
	assert.Equal(t, path, two.LastDispatch().Path)
	want, err := one.Intersect(ctx, rays, rayd.FlagsAll)
	require.NoError(t, err)
	assert.True(t, testscene.SameHits(want, got), "2-GPU IntersectInto differs from 1 GPU")

	out, err := two.AllocReflections(n, 4, true)
	require.NoError(t, err)
	defer out.Close()
	st := mustStreamOn(t, out.T)
	require.NoError(t, out.T.Memset32(st, 0x7fc00bad))
	require.NoError(t, out.ImageSources.Memset32(st, 0x7fc00bad))
	require.NoError(t, out.PrimIDs.Memset32(st, 0x5eed))
	require.NoError(t, out.Valid.Memset8(st, 0xab))
	require.NoError(t, st.Synchronize())
	require.NoError(t, two.TraceReflectionsInto(ctx, dr, out))
	assert.Equal(t, other, two.LastDispatch().Path)
	wr, err := one.TraceReflections(ctx, rays, 4)
	require.NoError(t, err)
	gotT := make([]float32, len(wr.T))
	gotP := make([]int32, len(wr.PrimIDs))
	gotI := make([]float32, len(wr.ImageSources))
	require.NoError(t, out.T.Download(st, gotT))
	require.NoError(t, out.PrimIDs.Download(st, gotP))
	require.NoError(t, out.ImageSources.Download(st, gotI))
	assert.True(t, testscene.EqualBits(wr.T, gotT), "2-GPU TraceReflectionsInto t")
	assert.Equal(t, wr.PrimIDs, gotP)
	assert.True(t, testscene.EqualBits(wr.ImageSources, gotI))
	gotValid := make([]uint8, len(wr.Valid))
	require.NoError(t, out.Valid.Download(st, gotValid))
	for i, v := range wr.Valid {
		if gotValid[i] != map[bool]uint8{false: 0, true: 1}[v] {
			t.Fatalf("2-GPU TraceReflectionsInto valid[%d] = %d, want %v", i, gotValid[i], v)
		}
	}

	ends := make([]float32, len(o))
	for i := range ends {
		ends[i] = o[i] + d[i]
	}
	seg, err := two.UploadRays(ctx, rayd.Rays{Origins: o, Directions: ends})
	require.NoError(t, err)
	defer seg.Close()
	vb, err := two.AllocVisible(n)
	require.NoError(t, err)
	defer vb.Close()
	require.NoError(t, vb.Memset8(st, 0xab))
	require.NoError(t, st.Synchronize())
	require.NoError(t, two.VisibleInto(ctx, seg, vb))
	assert.Equal(t, other, two.LastDispatch().Path)
	wantV, err := one.Visible(ctx, o, ends, nil)
	require.NoError(t, err)
	gotV := make([]uint8, n)
	require.NoError(t, vb.Download(st, gotV))
	for i := range wantV {
		require.Equal(t, wantV[i], gotV[i] != 0, "row %d", i)
	}

	// Weights [1 0]: the single-device launch on the master, same bits.
	pinned, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(devs...),
		rayd.WithMultiDevice(rayd.MultiDeviceOptions{Weights: []float64{1, 0}, AllowSameDevice: same}))
	require.NoError(t, err)
	defer pinned.Close()
	_, _, pg := intersectInto(t, pinned, rays)
	assert.Equal(t, shard.ModeMaster, pinned.LastDispatch().Mode)
	assert.True(t, testscene.SameHits(want, pg), "master-only IntersectInto differs from 1 GPU")
	// A refit right before the master-only launch: the launch sees it.
	moved := append([]float32(nil), meshes[1].Vertices...)
	for i := 2; i < len(moved); i += 3 {
		moved[i] = 0.3
	}
	require.NoError(t, one.UpdateVertices(ctx, 1, moved))
	require.NoError(t, pinned.UpdateVertices(ctx, 1, moved))
	_, _, pg = intersectInto(t, pinned, rays)
	want, err = one.Intersect(ctx, rays, rayd.FlagsAll)
	require.NoError(t, err)
	assert.True(t, testscene.SameHits(want, pg), "master-only IntersectInto after a refit differs from 1 GPU")

	// Buffers of the other scene's device are refused.
	oneRays, err := one.UploadRays(ctx, rays)
	require.NoError(t, err)
	defer oneRays.Close()
	assert.ErrorIs(t, two.IntersectInto(ctx, oneRays, dh), rayd.ErrWrongDevice)
}

// intersectInto uploads rays to s, poisons a full record, runs the device
// fast path and downloads the record; the buffers close with the test.
func intersectInto(t *testing.T, s *rayd.Scene, rays rayd.Rays) (*rayd.DeviceRays, *rayd.DeviceHits, *rayd.Hits) {
	ctx := context.Background()
	dr, err := s.UploadRays(ctx, rays)
	require.NoError(t, err)
	t.Cleanup(func() { _ = dr.Close() })
	dh, err := s.AllocHits(rays.Len(), rayd.FlagsAll)
	require.NoError(t, err)
	t.Cleanup(func() { _ = dh.Close() })
	poisonHits(t, dh)
	require.NoError(t, s.IntersectInto(ctx, dr, dh))
	h, err := dh.Download(ctx)
	require.NoError(t, err)
	return dr, dh, h
}

// poisonHits fills every field of a device record with a pattern no kernel
// writes (a NaN payload for floats, an out-of-range id for ints).
func poisonHits(t *testing.T, h *rayd.DeviceHits) {
	st := mustStream(t, h)
	for _, b := range []*rayd.Buffer[float32]{h.T, h.P, h.Normal, h.GeoN, h.UV, h.Bary} {
		if b != nil {
			require.NoError(t, b.Memset32(st, 0x7fc00bad))
		}
	}
	for _, b := range []*rayd.Buffer[int32]{h.ShapeID, h.PrimID, h.LocalPrimID, h.GlobalPrimID} {
		if b != nil {
			require.NoError(t, b.Memset32(st, 0x5eedbad))
		}
	}
	require.NoError(t, st.Synchronize())
}

// The built-in probe on CUDA replicas: every device is timed with resident
// rays, the ladder runs, and the weights land under the default operation.
func TestGPUCalibrateBuiltInProbe(t *testing.T) {
	devs, same := gputest.ReplicaDevices(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(testscene.Seed(t), 17))
	meshes := []rayd.Mesh{testscene.Soup(r, 50000, 0.02)}
	s, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(devs...), rayd.WithMultiDevice(rayd.MultiDeviceOptions{AllowSameDevice: same}))
	require.NoError(t, err)
	defer s.Close()
	for _, b := range []int{0, 4} {
		rec, err := s.Calibrate(ctx, rayd.CalibrateOptions{Options: calibrate.Options{Rows: 1 << 18, MaxBounces: b}})
		require.NoError(t, err)
		t.Logf("\n%s", rec)
		for i, sec := range rec.Seconds {
			assert.Greater(t, sec, 0.0, "device %d timed", i)
		}
		require.NotEmpty(t, rec.CandidateSeconds)
		for i, sec := range rec.CandidateSeconds {
			assert.Greater(t, sec, 0.0, "rung %d timed", i)
		}
		w, err := s.DeviceWeights(rec.Operation)
		require.NoError(t, err)
		assert.Equal(t, rec.Weights, w)
	}
}
