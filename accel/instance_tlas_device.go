package accel

import (
	"math"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
)

// ModuleTLASBuild is the module of the device top-level build
// (ptx/src/tlas_build.cu).
const ModuleTLASBuild = "tlas_build"

// Device top-level build constants (mirror ptx/src/tlas_build.cu).
const (
	// TLASDeviceMax is the largest instance count whose top level an
	// instance layer builds on the device (one block, its lists in shared
	// memory); larger sets are built on the host.
	TLASDeviceMax = 2048
	// tlasThreads is the one block's size.
	tlasThreads = 1024
	// objectBoxWords is the float64 count of one geometry's object box on
	// the device: objectBox's sum, diff and amax.
	objectBoxWords = 9
	// tlasCentWords and tlasBoxWords are the device build's scratch per
	// instance, in 32-bit words: the centroid (3 float64) and the box
	// rounded outward (6 float32).
	tlasCentWords = 6
	tlasBoxWords  = 6
)

// tlasOnDevice reports whether the top level over n instances is built on
// the device: 1 ≤ n ≤ TLASDeviceMax, with leaves of one instance (the
// kernel's shape).
func tlasOnDevice(n int) bool { return n >= 1 && n <= TLASDeviceMax && TLASLeafSize == 1 }

// objectBoxData is the device's copy of the object boxes (lo, hi): per
// geometry objectBox's sum, diff and amax, 3 float64 each.
func objectBoxData(lo, hi [][3]float64) []float64 {
	out := make([]float64, 0, objectBoxWords*len(lo))
	for g := range lo {
		o := newObjectBox(lo[g], hi[g])
		out = append(out, o.sum[:]...)
		out = append(out, o.diff[:]...)
		out = append(out, o.amax[:]...)
	}
	return out
}

// instanceKappa is the condition number of instance record r's linear part
// (instanceBox's second result, by the same operations in the same order).
func instanceKappa(r *geom.InstanceRecord) float64 {
	var na, ni float64
	for i := range 3 {
		var ra, ri float64
		for j := range 3 {
			ra += math.Abs(float64(r.Transform[4*i+j]))
			ri += math.Abs(float64(r.Inverse[3*i+j]))
		}
		na, ni = max(na, ra), max(ni, ri)
	}
	return max(na*ni, 1)
}

// slabScale is the world slab test's origin term for the largest
// condition number kmax: TLASInflate·kmax rounded up to a power of two.
func slabScale(kmax float64) float32 {
	return float32(math.Pow(2, math.Ceil(math.Log2(TLASInflate*kmax))))
}

// tlasScale is the slab scale of the top level over x (BuildTLAS's Scale),
// from the instances' condition numbers alone.
func tlasScale(x *geom.Instances) float32 {
	kmax := 1.0
	for i := range x.Records {
		kmax = max(kmax, instanceKappa(&x.Records[i]))
	}
	return slabScale(kmax)
}

// tlasDeviceArgs are the device build's buffers: the instance records, the
// object boxes, the outputs (nodes, order) and the scratch.
type tlasDeviceArgs struct {
	inst  *launch.Buffer[float32] // InstanceRecordWords per instance
	objs  *launch.Buffer[float64] // objectBoxWords per geometry
	nodes *launch.Buffer[uint32]  // NodeWords·TLASNodeCount(n)
	order *launch.Buffer[int32]   // n
	cent  *launch.Buffer[float64] // 3n
	box   *launch.Buffer[uint32]  // 6n
}

// launchTLASBuild queues rayd_tlas_build over n (1 ≤ n ≤ TLASDeviceMax)
// instances: one block writes every node word and the order.
func launchTLASBuild(run runner, a tlasDeviceArgs, n int) error {
	k := &kernelLauncher{r: run, module: ModuleTLASBuild}
	k.run("rayd_tlas_build", launch.Blocks(1, 1), launch.Threads(tlasThreads),
		a.inst, a.objs, int32(n), a.nodes, a.order, a.cent, a.box)
	return k.err
}
