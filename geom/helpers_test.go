package geom

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// newRand returns a generator seeded from the clock (or from RAYD_TEST_SEED)
// and logs the seed when the test fails, so that a failure can be replayed.
func newRand(t *testing.T) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RAYD_TEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("RAYD_TEST_SEED: %v", err)
		}
		seed = v
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("random seed: RAYD_TEST_SEED=%d", seed)
		}
	})
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
}
