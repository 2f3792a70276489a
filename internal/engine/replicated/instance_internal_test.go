package replicated

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// splitRows covers [0, n) with contiguous parts proportional to the
// weights, equal parts without usable weights, empty parts allowed.
func TestSplitRows(t *testing.T) {
	require.Equal(t, []int{0, 50, 100}, splitRows(100, []float64{1, 1}, 2))
	require.Equal(t, []int{0, 25, 100}, splitRows(100, []float64{1, 3}, 2))
	require.Equal(t, []int{0, 33, 67, 100}, splitRows(100, nil, 3))
	require.Equal(t, []int{0, 50, 100}, splitRows(100, []float64{1, 0}, 2), "a zero weight falls back to equal parts")
	require.Equal(t, []int{0, 1, 1}, splitRows(1, []float64{1, 1}, 2), "half a row rounds up to the first part")
	for _, n := range []int{0, 1, 7, 1000003} {
		b := splitRows(n, []float64{0.3, 0.2, 0.5}, 3)
		require.Equal(t, 0, b[0])
		require.Equal(t, n, b[3])
		for k := range 3 {
			require.LessOrEqual(t, b[k], b[k+1])
		}
	}
}
