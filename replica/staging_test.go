package replica

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Staging blocks come in steps of an eighth of a power of two: at most
// 12.5% above the request, never below it, and never below 64 KiB.
func TestStageSizeRoundsUpByAnEighth(t *testing.T) {
	for _, n := range []int{0, 1, minStage, minStage + 1, 100_000, 1 << 20, 1<<20 + 1, 3_000_001, 123_456_789} {
		got := stageSize(n)
		assert.GreaterOrEqual(t, got, n, "n=%d", n)
		assert.GreaterOrEqual(t, got, minStage, "n=%d", n)
		if n > minStage {
			assert.LessOrEqual(t, float64(got), 1.125*float64(n)+1, "n=%d", n)
		}
		assert.Equal(t, got, stageSize(got), "a block size is its own class (n=%d)", n)
	}
}
