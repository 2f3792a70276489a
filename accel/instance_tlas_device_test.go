package accel

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	cudasrc "github.com/rayd-go/rayd/ptx/src"
)

// The device build covers 1..TLASDeviceMax instances with leaves of one
// instance; other counts are built on the host.
func TestTLASOnDeviceSizes(t *testing.T) {
	require.Equal(t, 1, TLASLeafSize, "the device build's leaves hold one instance")
	for n, want := range map[int]bool{0: false, 1: true, 2: true, 1024: true, TLASDeviceMax: true,
		TLASDeviceMax + 1: false, 100000: false} {
		require.Equal(t, want, tlasOnDevice(n), "n=%d", n)
	}
}

// The host's scale for the device build is BuildTLAS's, and every
// instance's condition number is instanceBox's, on instance sets whose
// scales spread the condition numbers over several powers of two.
func TestTLASScaleMatchesBuild(t *testing.T) {
	r := testscene.Rand(t)
	objs := []objectBox{newObjectBox([3]float64{-1, -2, 0}, [3]float64{1, 0.5, 3})}
	for _, n := range []int{1, 2, 17, 300, 1024} {
		x, lo, hi := tlasCase(t, r, n)
		moved := make([]geom.Transform, n)
		for i := range moved {
			moved[i] = testscene.RandomTransform(r, 3)
			s := float32(math.Ldexp(1, r.IntN(13)-6)) // stretch one axis
			for k := range 3 {
				moved[i][4*k] *= s
			}
		}
		require.NoError(t, x.SetTransforms(0, moved))
		require.Equal(t, BuildTLAS(x, lo, hi).Scale, tlasScale(x), "n=%d", n)
		for i := range x.Records {
			_, k := instanceBox(&x.Records[i], &objs[0])
			require.Equal(t, k, instanceKappa(&x.Records[i]), "n=%d instance %d", n, i)
		}
	}
}

// The device's object boxes are objectBox's terms, 9 float64 per geometry.
func TestObjectBoxData(t *testing.T) {
	lo := [][3]float64{{-1, -2, 0}, {0.25, 4, -8}}
	hi := [][3]float64{{1, 0.5, 3}, {0.5, 6, -7}}
	got := objectBoxData(lo, hi)
	require.Len(t, got, objectBoxWords*len(lo))
	for g := range lo {
		o := newObjectBox(lo[g], hi[g])
		w := got[objectBoxWords*g:]
		require.Equal(t, o.sum[:], w[0:3])
		require.Equal(t, o.diff[:], w[3:6])
		require.Equal(t, o.amax[:], w[6:9])
	}
}

// The device build's argument lists match tlas_build.cu's kernels.
func TestTLASBuildLaunchArgumentsMatchKernels(t *testing.T) {
	rec := &recorder{t: t, seen: map[string]int{}, kernels: map[string]map[string][]cParam{
		ModuleTLASBuild: parseKernels(t, "tlas_build.cu"),
	}}
	args := tlasDeviceArgs{inst: buf[float32](), objs: buf[float64](), nodes: buf[uint32](), order: buf[int32](),
		cent: buf[float64](), box: buf[uint32]()}
	for _, n := range []int{1, 2, TLASDeviceMax} {
		require.NoError(t, launchTLASBuild(rec, args, n))
	}
	require.NoError(t, launchTLASRound(rec, buf[float64](), 5, buf[uint32](), buf[uint32]()))
	for entry := range rec.kernels[ModuleTLASBuild] {
		require.Positive(t, rec.seen[ModuleTLASBuild+"."+entry], "kernel %s is never launched", entry)
	}
}

// The kernel's constants are the Go side's: block size, largest count,
// node and record sizes, the leaf count's bits.
func TestTLASBuildConstantsMirrorTheKernel(t *testing.T) {
	src, err := cudasrc.Read("tlas_build.cu")
	require.NoError(t, err)
	for name, v := range map[string]int{"TLAS_THREADS": tlasThreads, "TLAS_MAX": TLASDeviceMax,
		"TLAS_LEAF_BITS": LeafCountBits, "TLAS_NODE_WORDS": NodeWords, "TLAS_REC_WORDS": InstanceRecordWords} {
		want := fmt.Sprintf("#define %s %d\n", name, v)
		require.True(t, strings.Contains(string(src), want), "tlas_build.cu does not declare %q", want)
	}
	require.Equal(t, 3*2, tlasCentWords, "three float64 centroids")
}
