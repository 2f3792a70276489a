package multidevice

import (
	"context"
	"fmt"
	"math"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/benchmarks"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/shard"
)

// offloadRow measures intersect (chunked + offload) on host rays: a scene
// over every device with ChunkRays = the configuration's chunk and an
// Offload hook that counts rows and chunks and the finite t of each chunk,
// against the single-device concatenated intersect. Peak device memory is
// measured first: streamed on every device, then concatenated on the
// master alone.
func (r *configRun) offloadRow(ctx context.Context, meshes []rayd.Mesh, rays rayd.Rays) (*benchmarks.Row, error) {
	// A fresh single-device scene: its peak holds the scene and what the
	// call allocates, not the other rows' resident buffers.
	single, err := rayd.NewScene(ctx, meshes, rayd.WithBackend(rayd.BackendCUDA), rayd.WithDevice(r.devs[0]))
	if err != nil {
		return nil, err
	}
	defer single.Close()
	var rowsSeen, chunks, finite int
	hook := shard.OffloadAs(func(start int, h *geom.Hits) error {
		chunks++
		rowsSeen += len(h.T)
		for _, t := range h.T {
			if !math.IsInf(float64(t), 0) && !math.IsNaN(float64(t)) {
				finite++
			}
		}
		return nil
	})
	s, err := rayd.NewScene(ctx, meshes, rayd.WithDevices(r.devs...),
		rayd.WithMultiDevice(rayd.MultiDeviceOptions{ChunkRays: r.cfg.ChunkRays, Offload: hook}))
	if err != nil {
		return nil, err
	}
	defer s.Close()
	streamed := func() error {
		rowsSeen, chunks, finite = 0, 0, 0
		_, err := s.Intersect(ctx, rays, rayd.FlagsAll)
		return err
	}
	var want *rayd.Hits
	concatenated := func() error {
		var err error
		want, err = single.Intersect(ctx, rays, rayd.FlagsAll)
		return err
	}
	// Peaks: the first run of each after a reset, so that every buffer the
	// call allocates is in it.
	if err := r.c.Sync(); err != nil {
		return nil, err
	}
	s.ResetPeakMemory()
	if err := streamed(); err != nil {
		return nil, err
	}
	perDev := s.Memory()
	single.ResetPeakMemory()
	if err := concatenated(); err != nil {
		return nil, err
	}
	concat := single.Memory()[0].Peak
	times, err := interleaved(r.c, r.o.Warmup, r.o.Repeat, concatenated, streamed)
	if err != nil {
		return nil, err
	}
	wantFinite := 0
	for _, t := range want.T {
		if !math.IsInf(float64(t), 0) && !math.IsNaN(float64(t)) {
			wantFinite++
		}
	}
	if rowsSeen != rays.Len() || finite != wantFinite {
		return nil, fmt.Errorf("%w: offload hook saw %d of %d rows, %d finite t against %d", ErrMismatch, rowsSeen, rays.Len(), finite, wantFinite)
	}
	row := r.newRow(times[0], fmt.Sprintf("%d rays", rays.Len()), rays.Len())
	r.addMulti(row, s, times[1], true)
	row.RowsOffloaded, row.ChunksOffloaded = rowsSeen, chunks
	master := r.devs[0]
	pm := &benchmarks.PeakMemory{Status: benchmarks.PeakMeasured, MasterDeviceIndex: &master, ConcatenatedBytes: &concat}
	for _, m := range perDev {
		pm.PerDeviceStreamedBytes = append(pm.PerDeviceStreamedBytes, benchmarks.DeviceBytes{DeviceIndex: m.Device, Bytes: m.Peak})
		if m.Device == master {
			peak := m.Peak
			pm.StreamedBytes = &peak
		}
	}
	if pm.StreamedBytes == nil {
		return nil, fmt.Errorf("multidevice: no memory figures for the master of the offload scene")
	}
	row.PeakMemory = pm
	row.MasterPeakBytesStreamed, row.MasterPeakBytesConcatenated = *pm.StreamedBytes, concat
	return row, nil
}
