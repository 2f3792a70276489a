package accel

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
)

// The staging words of an update are the instance records alone
// (InstanceRecords' bits, masks included) when the top level is built on
// the device, else the top level's nodes, the records and the leaf order,
// in that order; every word is written, on dirty memory, through a stage
// reused across updates, and the scale is BuildTLAS's either way.
func TestInstanceStageWordsAreTheLayout(t *testing.T) {
	r := testscene.Rand(t)
	for _, n := range []int{1, 4, 5, 40, 700, TLASDeviceMax, TLASDeviceMax + 1, 3001} {
		x, lo, hi := tlasCase(t, r, n)
		for i := range x.Records {
			x.Records[i].Mask = uint8(r.Uint32())
		}
		st := instanceStage{lay: newStageLayout(n), leaf: make([]int32, n), tb: newTLASBuilder()}
		lay := st.lay
		require.Equal(t, n <= TLASDeviceMax, lay.onDevice, "n=%d", n)
		w := make([]uint32, lay.stageWords)
		for round := range 2 {
			for k := range w {
				w[k] = 0xdeadbeef
			}
			if round > 0 {
				moved := make([]geom.Transform, n)
				for i := range moved {
					moved[i] = testscene.RandomTransform(r, 2)
				}
				require.NoError(t, x.SetTransforms(0, moved))
			}
			scale := st.fill(w, x, lo, hi)
			tl := BuildTLAS(x, lo, hi)
			require.Equal(t, tl.Scale, scale)
			// The staging words land at stageFrom in the device buffer.
			dev := make([]uint32, lay.total)
			copy(dev[lay.stageFrom:], w)
			rec := InstanceRecords(x)
			require.Len(t, rec, lay.recWords)
			for k, v := range rec {
				require.Equal(t, math.Float32bits(v), dev[lay.recs+k], "n=%d round %d: record word %d", n, round, k)
			}
			if lay.onDevice {
				require.Equal(t, lay.recWords, lay.stageWords, "n=%d: only the records are staged", n)
				continue
			}
			require.Equal(t, tl.Nodes, dev[lay.nodes:lay.nodes+lay.nodeWords], "n=%d round %d: nodes", n, round)
			for i, id := range tl.Order {
				require.Equal(t, uint32(id), dev[lay.order+i], "n=%d round %d: order %d", n, round, i)
			}
		}
	}
}

// The device buffer's regions follow one another without overlap, each
// aligned for its kernels' loads (nodes 64 bytes, records 16, the
// centroids 8), and the staging words cover the records (device build) or
// nodes, records and order (host build).
func TestStageLayoutRegions(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 1024, 1025, TLASDeviceMax, TLASDeviceMax + 1, 5000} {
		l := newStageLayout(n)
		require.Equal(t, tlasOnDevice(n), l.onDevice)
		require.Equal(t, TLASNodeCount(n), l.numNodes)
		require.Equal(t, NodeWords*l.numNodes, l.nodeWords)
		require.Equal(t, InstanceRecordWords*n, l.recWords)
		require.Zero(t, l.nodes)
		require.Zero(t, l.recs%16, "records at a 64-byte offset: n=%d", n)
		require.Equal(t, l.nodes+l.nodeWords, l.recs)
		require.Equal(t, l.recs+l.recWords, l.order)
		if !l.onDevice {
			require.Equal(t, l.order+n, l.total)
			require.Equal(t, [2]int{0, l.total}, [2]int{l.stageFrom, l.stageWords})
			continue
		}
		require.Zero(t, l.cent%2, "centroids 8-byte aligned: n=%d", n)
		require.GreaterOrEqual(t, l.cent, l.order+n)
		require.Less(t, l.cent, l.order+n+2)
		require.Equal(t, l.cent+tlasCentWords*n, l.box)
		require.Equal(t, l.box+tlasBoxWords*n, l.total)
		require.Equal(t, [2]int{l.recs, l.recWords}, [2]int{l.stageFrom, l.stageWords})
	}
}
