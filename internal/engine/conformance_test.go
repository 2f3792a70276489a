package engine_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/internal/engine/cpu"
	"github.com/rayd-go/rayd/internal/engine/cuda"
	"github.com/rayd-go/rayd/internal/engine/replicated"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/internal/simdev"
	"github.com/rayd-go/rayd/internal/workload"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/rf"
	"github.com/rayd-go/rayd/shard"
)

func tables(t *testing.T) *geom.Tables {
	t.Helper()
	m := workload.GridMesh(6, 2)
	m.Dynamic = true
	tb, err := geom.BuildTables([]geom.Mesh{m})
	require.NoError(t, err)
	return tb
}

// call invokes one Engine method with small valid inputs and returns its
// error. Every method of the interface must have an entry: a method added
// to Engine without one fails TestEveryEngineAnswersEveryMethod.
func calls(tb *geom.Tables) map[string]func(ctx context.Context, e engine.Engine) error {
	o, d := workload.PlaneRays(64, 5)
	r := engine.Rays{Origins: o, Directions: d}
	ed := engine.Edges{Scene: edge.NewScene(tb), Gen: 1}
	pts := make([]float32, 3*16)
	for i := range pts {
		pts[i] = float32(i%7)*0.1 - 0.3
	}
	gid := make([]int32, 16)
	rgid := make([]int32, 64)
	pair, err := geom.PairSegments(pts, pts, pts, nil, nil)
	if err != nil {
		panic(err)
	}
	st := &rf.DfrStates{EdgeIndex: []int32{0}, EdgePos: []float32{0, 0, 1}, EdgeDir: []float32{1, 0, 0},
		EdgeTMin: []float32{-1}, EdgeTMax: []float32{1}, N0: []float32{0, 0, 1}, N1: []float32{0, 1, 0},
		Prim0: []int32{0}, Prim1: []int32{1}, ExteriorAngle: []float32{4}, Src: []float32{0, -2, 2}, SrcPower: []float32{1}}
	grid := rf.DfrGrid{Axis: 2, Coord0Min: -1, Coord0Max: 1, Coord1Min: -1, Coord1Max: 1, Res0: 2, Res1: 2}
	ao := rf.DefaultAccumOptions()
	ao.DirectSamples, ao.KellerSamples, ao.SuffixSamples, ao.LaneCount = 32, 0, 0, 32
	co := rf.DefaultCoherentOptions()
	co.LaneCount = 4
	inst, err := geom.BuildInstances(tb, []geom.Instance{{Geometry: 0, Transform: geom.Identity}})
	if err != nil {
		panic(err)
	}
	return map[string]func(context.Context, engine.Engine) error{
		"Describe": func(_ context.Context, e engine.Engine) error { return nonEmpty(e.Describe()) },
		"Intersect": func(ctx context.Context, e engine.Engine) error {
			_, err := e.Intersect(ctx, r, geom.FlagsAll)
			return err
		},
		"TraceReflections": func(ctx context.Context, e engine.Engine) error {
			_, err := e.TraceReflections(ctx, r, 2)
			return err
		},
		"Visible": func(ctx context.Context, e engine.Engine) error {
			_, err := e.Visible(ctx, pts, pts, nil)
			return err
		},
		"VisiblePair": func(ctx context.Context, e engine.Engine) error {
			_, err := e.VisiblePair(ctx, pair)
			return err
		},
		"VisibleEdge": func(ctx context.Context, e engine.Engine) error {
			b, err := geom.EdgeSegments(geom.EdgeSamples{Source: pts, Position: pts, Direction: pts,
				TMin: make([]float32, 16), TMax: make([]float32, 16)})
			if err != nil {
				return err
			}
			_, err = e.VisibleEdge(ctx, b)
			return err
		},
		"VisibleChain": func(ctx context.Context, e engine.Engine) error {
			b, err := geom.ChainSegments(pts, 2, make([]int32, 8), nil, nil)
			if err != nil {
				return err
			}
			_, err = e.VisibleChain(ctx, b)
			return err
		},
		"Crossings": func(ctx context.Context, e engine.Engine) error {
			c, err := e.Crossings(ctx, pts[:45], pts[3:], nil, 4)
			if err == nil && (c.Rows() != 15 || c.K != 4 || len(c.T) != 60) {
				return errors.New("crossings record of the wrong shape")
			}
			return err
		},
		"NearestEdge": func(ctx context.Context, e engine.Engine) error {
			_, err := e.NearestEdge(ctx, ed, pts, nil)
			return err
		},
		"NearestEdgeRay": func(ctx context.Context, e engine.Engine) error {
			_, err := e.NearestEdgeRay(ctx, ed, r)
			return err
		},
		"NearestEdges": func(ctx context.Context, e engine.Engine) error {
			_, err := e.NearestEdges(ctx, ed, pts, 3, nil)
			return err
		},
		"NearestEdgeVJP": func(ctx context.Context, e engine.Engine) error {
			_, err := e.NearestEdgeVJP(ctx, ed, pts, gid, edge.PointCotangent{})
			return err
		},
		"NearestEdgeRayVJP": func(ctx context.Context, e engine.Engine) error {
			_, err := e.NearestEdgeRayVJP(ctx, ed, r, rgid, edge.RayCotangent{})
			return err
		},
		"ClosestPoint": func(ctx context.Context, e engine.Engine) error {
			_, err := e.ClosestPoint(ctx, pts, 0, nil)
			return err
		},
		"SetInstances": func(ctx context.Context, e engine.Engine) error {
			return e.SetInstances(ctx, inst)
		},
		"UpdateInstances": func(ctx context.Context, e engine.Engine) error {
			if err := e.SetInstances(ctx, inst); err != nil {
				return err
			}
			return e.UpdateInstances(ctx, 0, 1)
		},
		"IntersectInstanced": func(ctx context.Context, e engine.Engine) error {
			if err := e.SetInstances(ctx, inst); err != nil {
				return err
			}
			_, err := e.IntersectInstanced(ctx, r, geom.FlagsAll)
			return err
		},
		"InstanceTransformVJP": func(ctx context.Context, e engine.Engine) error {
			if err := e.SetInstances(ctx, inst); err != nil {
				return err
			}
			ids := make([]int32, 64)
			_, err := e.InstanceTransformVJP(ctx, r, ids, make([]int32, 64), make([]float32, 64), nil)
			return err
		},
		"WindingSums": func(ctx context.Context, e engine.Engine) error {
			w, err := e.WindingSums(ctx, pts, nil)
			if err != nil {
				return err
			}
			if w.Len() != 16 || len(w.Bound) != 16 {
				return errors.New("winding sums of the wrong shape")
			}
			for i, v := range w.Sum {
				if math.IsNaN(v) || math.IsInf(v, 0) || !(w.Bound[i] >= 0) {
					return fmt.Errorf("winding row %d: sum %v bound %v", i, v, w.Bound[i])
				}
			}
			return nil
		},
		"IntersectVJP": func(ctx context.Context, e engine.Engine) error {
			_, err := e.IntersectVJP(ctx, r, make([]int32, 64), nil, geom.IntersectCotangents{T: make([]float32, 64)})
			return err
		},
		"AccumDfrDirect": func(ctx context.Context, e engine.Engine) error {
			_, err := e.AccumDfrDirect(ctx, st, grid, nil, nil, ao)
			return err
		},
		"AccumDfrCoherentDirect": func(ctx context.Context, e engine.Engine) error {
			_, err := e.AccumDfrCoherentDirect(ctx, st, grid, nil, nil, co)
			return err
		},
		"AccumulateReflections": func(ctx context.Context, e engine.Engine) error {
			rays := rf.ReflRays{O: o[:3*32], D: d[:3*32], TxPosition: o[:3*32]}
			_, err := e.AccumulateReflections(ctx, rays, rf.AccumGrid{Axis: 2, Coord0Max: 1, Coord1Max: 1, Res0: 2, Res1: 2},
				nil, 2, rf.DefaultReflOptions())
			return err
		},
		"TraceDfrPaths": func(ctx context.Context, e engine.Engine) error {
			po := rf.DefaultPathOptions()
			po.Layout = rf.SourceLane
			_, err := e.TraceDfrPaths(ctx, []float32{0, -1, 1}, []float32{0, 1, 1}, st, nil, []bool{true}, po)
			return err
		},
		"Refit": func(ctx context.Context, e engine.Engine) error {
			return e.Refit(ctx, 0, tb.Vertices)
		},
		"SetEdgeMask": func(ctx context.Context, e engine.Engine) error { return e.SetEdgeMask(ctx, ed) },
		"SetMeshMask": func(ctx context.Context, e engine.Engine) error { return e.SetMeshMask(ctx, 0, tb.MaskOf(0)) },
		"Rebuild":     func(ctx context.Context, e engine.Engine) error { return e.Rebuild(ctx) },
		"FastDevice":  func(_ context.Context, e engine.Engine) error { _, err := e.FastDevice(); return err },
		"WithStream": func(ctx context.Context, e engine.Engine) error {
			return e.WithStream(ctx, func(*launch.Stream) error { return nil })
		},
		"IntersectInto": func(ctx context.Context, e engine.Engine) error {
			return withDevice(e, func(dr engine.DeviceRays, h engine.DeviceHits, _ engine.DeviceReflections, v *launch.Buffer[uint8]) error {
				return e.IntersectInto(ctx, dr, geom.FlagsNone, h)
			})
		},
		"TraceReflectionsInto": func(ctx context.Context, e engine.Engine) error {
			return withDevice(e, func(dr engine.DeviceRays, _ engine.DeviceHits, rr engine.DeviceReflections, _ *launch.Buffer[uint8]) error {
				return e.TraceReflectionsInto(ctx, dr, 1, rr)
			})
		},
		"VisibleInto": func(ctx context.Context, e engine.Engine) error {
			return withDevice(e, func(dr engine.DeviceRays, _ engine.DeviceHits, _ engine.DeviceReflections, v *launch.Buffer[uint8]) error {
				return e.VisibleInto(ctx, dr, v)
			})
		},
		"IntersectVJPInto": func(ctx context.Context, e engine.Engine) error {
			return withDevice(e, func(dr engine.DeviceRays, h engine.DeviceHits, _ engine.DeviceReflections, _ *launch.Buffer[uint8]) error {
				return e.IntersectVJPInto(ctx, dr, engine.DeviceTape{Prim: h.PrimID}, engine.DeviceCotangents{T: h.T}, engine.DeviceGrads{})
			})
		},
		"Memory":        func(_ context.Context, e engine.Engine) error { _ = e.Memory(); return nil },
		"ResetPeak":     func(_ context.Context, e engine.Engine) error { e.ResetPeak(); return nil },
		"Devices":       func(_ context.Context, e engine.Engine) error { _ = e.Devices(); return nil },
		"LastDispatch":  func(_ context.Context, e engine.Engine) error { _ = e.LastDispatch(); return nil },
		"LastChunkPlan": func(_ context.Context, e engine.Engine) error { _ = e.LastChunkPlan(); return nil },
		"Weights": func(_ context.Context, e engine.Engine) error {
			w, err := e.Weights("intersect_full")
			if err == nil && len(w) == 0 {
				return errors.New("no weights")
			}
			return err
		},
		"Calibration": func(_ context.Context, e engine.Engine) error {
			if c, ok := e.Calibration(); ok {
				return c.Close()
			}
			return nil
		},
		"Close": func(context.Context, engine.Engine) error { return nil }, // called by the cleanup
	}
}

func nonEmpty(s string) error {
	if s == "" {
		return errors.New("empty description")
	}
	return nil
}

// withDevice runs fn with small device buffers on the engine's fast device,
// or returns the engine's refusal.
func withDevice(e engine.Engine, fn func(engine.DeviceRays, engine.DeviceHits, engine.DeviceReflections, *launch.Buffer[uint8]) error) error {
	dev, err := e.FastDevice()
	if err != nil {
		return err
	}
	const n = 32
	var bufs []interface{ Close() error }
	f32 := func(k int) *launch.Buffer[float32] {
		b, err := launch.Alloc[float32](dev, k)
		if err != nil {
			panic(err)
		}
		bufs = append(bufs, b)
		if err := e.WithStream(context.Background(), func(st *launch.Stream) error { return b.Memset8(st, 0) }); err != nil {
			panic(err)
		}
		return b
	}
	defer func() {
		for _, b := range bufs {
			_ = b.Close()
		}
	}()
	prim, _ := launch.Alloc[int32](dev, n)
	valid, _ := launch.Alloc[uint8](dev, n)
	vis, _ := launch.Alloc[uint8](dev, n)
	bufs = append(bufs, prim, valid, vis)
	dr := engine.DeviceRays{Origins: f32(3 * n), Directions: f32(3 * n), N: n}
	h := engine.DeviceHits{T: f32(n), PrimID: prim}
	rr := engine.DeviceReflections{Valid: valid, T: f32(n), PrimIDs: prim}
	return fn(dr, h, rr, vis)
}

// engines builds every engine this machine can run over tb.
func engines(t *testing.T, tb *geom.Tables) map[string]engine.Engine {
	t.Helper()
	ctx := context.Background()
	out := map[string]engine.Engine{}
	c, err := cpu.New(ctx, tb)
	require.NoError(t, err)
	out["cpu"] = c
	for name, devs := range map[string][]int{"replicated-sim": {0, 1}, "replicated-sim-same-device": {0, 0}} {
		r, err := replicated.New(ctx, replicated.Config{Devices: devs, Tables: tb,
			Options: shard.Options{AllowSameDevice: true, MinRaysPerDevice: 1, MinLanesPerDevice: 1},
			Source:  simdev.New(simdev.Config{Devices: 2})})
		require.NoError(t, err)
		out[name] = r
	}
	if n, err := gputest.Available(); err == nil && n > 0 {
		g, err := cuda.New(ctx, tb, 0, cuda.BVH)
		require.NoError(t, err)
		out["cuda"] = g
	}
	for _, e := range out {
		t.Cleanup(func() { require.NoError(t, e.Close()) })
	}
	return out
}

// Every engine implements every method of the interface: each call either
// succeeds or is a typed refusal (ErrUnsupported). Only the device fast
// paths may be refused, and only by engines without a CUDA device.
func TestEveryEngineAnswersEveryMethod(t *testing.T) {
	tb := tables(t)
	table := calls(tb)
	iface := reflect.TypeFor[engine.Engine]()
	var names []string
	for i := range iface.NumMethod() {
		names = append(names, iface.Method(i).Name)
	}
	for name := range table {
		require.Contains(t, names, name, "the table names a method Engine does not have")
	}
	instancing := []string{"SetInstances", "UpdateInstances", "IntersectInstanced", "InstanceTransformVJP"}
	device := []string{"FastDevice", "WithStream", "IntersectInto", "TraceReflectionsInto", "VisibleInto", "IntersectVJPInto"}
	for ename, e := range engines(t, tb) {
		for _, m := range names {
			call, ok := table[m]
			require.True(t, ok, "Engine.%s has no conformance call", m)
			err := call(context.Background(), e)
			if err == nil {
				continue
			}
			onGPU := ename == "cuda"
			if !onGPU && slices.Contains(device, m) && errors.Is(err, engine.ErrUnsupported) {
				continue
			}
			// The instance layer runs on the CPU engine only so far; the
			// others refuse it with a typed error.
			if ename != "cpu" && slices.Contains(instancing, m) && errors.Is(err, engine.ErrUnsupported) {
				continue
			}
			t.Errorf("%s.%s: %v", ename, m, err)
		}
	}
}
