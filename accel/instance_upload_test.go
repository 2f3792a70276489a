package accel

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
)

// The staging words of an update are the top level's nodes, the instance
// records (InstanceRecords' bits, masks included) and the leaf order, in
// that order, every word written: on dirty memory, through a stage reused
// across updates.
func TestInstanceStageWordsAreTheLayout(t *testing.T) {
	r := testscene.Rand(t)
	for _, n := range []int{1, 4, 5, 40, 700} {
		x, lo, hi := tlasCase(t, r, n)
		for i := range x.Records {
			x.Records[i].Mask = uint8(r.Uint32())
		}
		st := instanceStage{numNodes: TLASNodeCount(n), leaf: make([]int32, n), tb: newTLASBuilder()}
		nodeWords, recWords := NodeWords*st.numNodes, InstanceRecordWords*n
		w := make([]uint32, nodeWords+recWords+n)
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
			require.Equal(t, tl.Nodes, w[:nodeWords], "n=%d round %d: nodes", n, round)
			rec := InstanceRecords(x)
			require.Len(t, rec, recWords)
			for k, v := range rec {
				require.Equal(t, math.Float32bits(v), w[nodeWords+k], "n=%d round %d: record word %d", n, round, k)
			}
			for i, id := range tl.Order {
				require.Equal(t, uint32(id), w[nodeWords+recWords+i], "n=%d round %d: order %d", n, round, i)
			}
		}
	}
}
