package accel

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/internal/workload"
)

// benchInstances is the instanced benchmark's scene on the host: 1,024
// instances of the light grid (testscene.Placement) and the grid's object
// bounds.
func benchInstances(b *testing.B) (*geom.Instances, [][3]float64, [][3]float64) {
	b.Helper()
	light, _, _ := workload.Light.Build()
	lt, err := geom.BuildTables([]geom.Mesh{light})
	require.NoError(b, err)
	x, err := geom.BuildInstances(lt, testscene.Placement(1024, 7))
	require.NoError(b, err)
	lo, hi := ObjectBounds(lt)
	return x, lo, hi
}

// BenchmarkBuildTLAS times the top-level build over the benchmark's 1,024
// instances.
func BenchmarkBuildTLAS(b *testing.B) {
	x, lo, hi := benchInstances(b)
	b.ReportAllocs()
	for b.Loop() {
		BuildTLAS(x, lo, hi)
	}
}

// BenchmarkInstanceRecords times packing the 1,024 device records.
func BenchmarkInstanceRecords(b *testing.B) {
	x, _, _ := benchInstances(b)
	b.ReportAllocs()
	for b.Loop() {
		InstanceRecords(x)
	}
}

// BenchmarkBuildTLASReference times the first build (the reference
// of TestBuildTLASMatchesTheReference) on the same instances, the baseline
// of BenchmarkBuildTLAS.
func BenchmarkBuildTLASReference(b *testing.B) {
	x, lo, hi := benchInstances(b)
	b.ReportAllocs()
	for b.Loop() {
		refBuildTLAS(x, lo, hi)
	}
}

// BenchmarkTLASBuilderReused times the build as an InstanceLayer update
// runs it: one builder, its scratch and the destination reused; serial,
// and parallel (as on hosts of at least tlasParallelProcs processors).
func BenchmarkTLASBuilderReused(b *testing.B) {
	x, lo, hi := benchInstances(b)
	for _, serial := range []bool{true, false} {
		name := map[bool]string{true: "serial", false: "parallel"}[serial]
		b.Run(name, func(b *testing.B) {
			nodes, order := make([]uint32, NodeWords*TLASNodeCount(x.Len())), make([]int32, x.Len())
			tb := &tlasBuilder{serial: serial}
			b.ReportAllocs()
			for b.Loop() {
				tb.build(x, lo, hi, nodes, order)
			}
		})
	}
}

// BenchmarkInstanceUpdateHost times the host side of an update of the
// 1,024 instances (after SetTransforms): "reference" with the reference
// build and InstanceRecords (three arrays to upload), "stage-host" as
// InstanceLayer.Update does it when the host builds the top level (the top
// level, records and order written into the one staging buffer by the
// layer's reused builder), "stage-device" as it does for a device build
// (the records and the slab scale).
func BenchmarkInstanceUpdateHost(b *testing.B) {
	x, lo, hi := benchInstances(b)
	b.Run("reference", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			refBuildTLAS(x, lo, hi)
			InstanceRecords(x)
		}
	})
	for _, onDevice := range []bool{false, true} {
		name := map[bool]string{false: "stage-host", true: "stage-device"}[onDevice]
		b.Run(name, func(b *testing.B) {
			n := x.Len()
			st := instanceStage{lay: stageLayoutFor(n, onDevice), leaf: make([]int32, n), tb: newTLASBuilder()}
			w := make([]uint32, st.lay.stageWords)
			b.ReportAllocs()
			for b.Loop() {
				st.fill(w, x, lo, hi)
			}
		})
	}
}
