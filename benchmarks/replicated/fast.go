package main

import (
	"context"
	"fmt"
	"time"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/launch"
)

// poison fills b with 0xFF bytes on a stream of its device.
func poison[T launch.Elem](b *launch.Buffer[T]) error {
	if b == nil {
		return nil
	}
	st, err := b.Device().NewStream()
	if err != nil {
		return err
	}
	defer st.Close()
	if err := b.Memset8(st, 0xff); err != nil {
		return err
	}
	return st.Synchronize()
}

// fastPaths runs the device fast paths on both scenes with poisoned outputs
// and compares the downloaded records.
func fastPaths(ctx context.Context, single, repl *rayd.Scene, b *batch) []opRow {
	var rows []opRow
	add := func(name string, want, got any, err error) {
		r := opRow{Op: name, Config: "grid 191 + box, device buffers", Rows: b.n, Poisoned: true}
		if d := repl.LastDispatch(); d != nil {
			r.Dispatch = string(d.Mode)
		}
		if err == nil {
			r.Fields, r.Mismatches, _, err = diff(want, got)
		}
		r.BitwiseEqual = err == nil && r.Mismatches == 0
		if err != nil {
			r.Fields = []string{"error: " + err.Error()}
		}
		fmt.Printf("%-30s %-24s %8d rows  %-10s mismatches %d (poisoned outputs)\n", name, "device buffers", b.n, r.Dispatch, r.Mismatches)
		rows = append(rows, r)
	}
	hs, err := intersectInto(ctx, single, b)
	var hr *geom.Hits
	if err == nil {
		hr, err = intersectInto(ctx, repl, b)
	}
	add("IntersectInto (all flags)", hs, hr, err)
	vs, err := visibleInto(ctx, single, b)
	var vr []uint8
	if err == nil {
		vr, err = visibleInto(ctx, repl, b)
	}
	add("VisibleInto", vs, vr, err)
	rs, err := reflectInto(ctx, single, b)
	var rr *reflRecord
	if err == nil {
		rr, err = reflectInto(ctx, repl, b)
	}
	add("TraceReflectionsInto (4)", rs, rr, err)
	return rows
}

func intersectInto(ctx context.Context, s *rayd.Scene, b *batch) (*geom.Hits, error) {
	rays, err := s.UploadRays(ctx, b.rays())
	if err != nil {
		return nil, err
	}
	defer rays.Close()
	out, err := s.AllocHits(b.n, rayd.FlagsAll)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	for _, f := range []*launch.Buffer[float32]{out.T, out.P, out.Normal, out.GeoN, out.UV, out.Bary} {
		if err := poison(f); err != nil {
			return nil, err
		}
	}
	for _, f := range []*launch.Buffer[int32]{out.ShapeID, out.PrimID, out.LocalPrimID, out.GlobalPrimID} {
		if err := poison(f); err != nil {
			return nil, err
		}
	}
	if err := s.IntersectInto(ctx, rays, out); err != nil {
		return nil, err
	}
	return out.Download(ctx)
}

func visibleInto(ctx context.Context, s *rayd.Scene, b *batch) ([]uint8, error) {
	segs, err := s.UploadRays(ctx, rayd.Rays{Origins: b.o, Directions: b.end, Active: b.active})
	if err != nil {
		return nil, err
	}
	defer segs.Close()
	out, err := s.AllocVisible(b.n)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	if err := poison(out); err != nil {
		return nil, err
	}
	if err := s.VisibleInto(ctx, segs, out); err != nil {
		return nil, err
	}
	return download(out)
}

type reflRecord struct {
	Valid []uint8
	T     []float32
	Prim  []int32
	Image []float32
}

func reflectInto(ctx context.Context, s *rayd.Scene, b *batch) (*reflRecord, error) {
	rays, err := s.UploadRays(ctx, b.rays())
	if err != nil {
		return nil, err
	}
	defer rays.Close()
	out, err := s.AllocReflections(b.n, 4, true)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	for _, e := range []error{poison(out.Valid), poison(out.T), poison(out.PrimIDs), poison(out.ImageSources)} {
		if e != nil {
			return nil, e
		}
	}
	if err := s.TraceReflectionsInto(ctx, rays, out); err != nil {
		return nil, err
	}
	r := &reflRecord{}
	if r.Valid, err = download(out.Valid); err == nil {
		if r.T, err = download(out.T); err == nil {
			if r.Prim, err = download(out.PrimIDs); err == nil {
				r.Image, err = download(out.ImageSources)
			}
		}
	}
	return r, err
}

func download[T launch.Elem](b *launch.Buffer[T]) ([]T, error) {
	st, err := b.Device().NewStream()
	if err != nil {
		return nil, err
	}
	defer st.Close()
	out := make([]T, b.Len())
	return out, b.Download(st, out)
}

// offloadAll runs every per_ray operation on a same-device replicated scene
// with ChunkRays and an Offload hook and counts the rows each chunk hands
// over.
func offloadAll(ctx context.Context, meshes []rayd.Mesh, rows int, build factory) ([]offloadRow, error) {
	seen := map[int]int{}
	chunks := 0
	hook := func(start int, chunk any) error {
		n := 0
		switch c := chunk.(type) {
		case *geom.Hits:
			n = c.Len()
		case *geom.Reflections:
			n = c.Len()
		case []bool:
			n = len(c)
		case *geom.PairVisibility:
			n = c.Len()
		case *geom.ChainVisibility:
			n = c.Len()
		case *edge.PointResult:
			n = c.Len()
		case *edge.RayResult:
			n = c.Len()
		case *edge.TopK:
			n = c.Len()
		case *geom.Crossings:
			n = c.Rows()
		default:
			return fmt.Errorf("offload chunk of type %T", chunk)
		}
		chunks++
		for i := start; i < start+n; i++ {
			seen[i]++
		}
		return nil
	}
	single, s, err := build(ctx, meshes, rayd.MultiDeviceOptions{ChunkRays: 1 << 16, Offload: hook})
	if err != nil {
		return nil, err
	}
	defer single.Close()
	defer s.Close()
	b := newBatch(rows, uint64(time.Now().UnixNano()))
	var out []offloadRow
	for _, op := range ops() {
		if op.tol != 0 {
			continue // the backward passes stream partial sums, not rows
		}
		clear(seen)
		chunks = 0
		if _, _, err := op.run(ctx, s, b); err != nil {
			return nil, fmt.Errorf("offload %s: %w", op.name, err)
		}
		want := b.n
		if op.name == "visible_chain" {
			want = len(b.chainLen)
		}
		once := len(seen) == want
		for _, c := range seen {
			once = once && c == 1
		}
		out = append(out, offloadRow{Op: op.name, Rows: want, Streamed: len(seen), Once: once, Chunks: chunks})
		fmt.Printf("offload %-30s %8d rows, %d chunks, every row once: %v\n", op.name, want, chunks, once)
	}
	return out, nil
}

// timeHalfRays times NearestEdgeRay over half rays on the compute mesh
// (its edges enabled) on both scenes.
func timeHalfRays(ctx context.Context, n, rounds int, build factory) (*timingRow, error) {
	mesh, o, d := workload.Compute.Scaled(n).Build()
	mesh.EdgesDisabled = false
	single, repl, err := build(ctx, []rayd.Mesh{mesh}, rayd.MultiDeviceOptions{})
	if err != nil {
		return nil, err
	}
	defer single.Close()
	defer repl.Close()
	rays := rayd.Rays{Origins: o, Directions: d}
	t := &timingRow{Op: "nearest_edge_ray (half rays)", Config: "compute", Rows: n, Edges: single.NumEdges(), Target: 1.5}
	for _, s := range []*rayd.Scene{single, repl} { // build the edge BVHs outside the timing
		if _, err := s.NearestEdgeRay(ctx, rayd.Rays{Origins: o[:3], Directions: d[:3]}); err != nil {
			return nil, err
		}
	}
	for range rounds {
		for i, s := range []*rayd.Scene{single, repl} {
			t0 := time.Now()
			if _, err := s.NearestEdgeRay(ctx, rays); err != nil {
				return nil, err
			}
			if i == 0 {
				t.SingleMs = append(t.SingleMs, ms(time.Since(t0)))
			} else {
				t.ReplicatedMs = append(t.ReplicatedMs, ms(time.Since(t0)))
			}
		}
	}
	t.Ratio = minOf(t.ReplicatedMs) / minOf(t.SingleMs)
	t.Met = t.Ratio <= t.Target
	return t, nil
}
