package accel

import (
	"errors"
	"fmt"
	"math"

	"github.com/rayd-go/rayd/launch"
)

// ErrSortArgument is returned (wrapped) by RadixSort and
// NewRadixSortScratch for arguments they cannot sort with: a nil stream or
// buffer, a negative or too large count, the keys and values in one buffer,
// or buffers too short for the count (those errors also match
// launch.ErrLength).
var ErrSortArgument = errors.New("accel: invalid radix sort argument")

// RadixSortScratch is the device scratch of RadixSort for up to Cap pairs:
// the second key and value arrays of the passes and the digit histograms.
type RadixSortScratch struct {
	keys, vals, hist, sums *launch.Buffer[uint32]
	n                      int
}

// radixSizes are the tile counts of a sort of n pairs: radix tiles and the
// scan tiles of the 256·tiles histogram.
func radixSizes(n int) (tiles, histTiles int) {
	tiles = max((n+radixTile-1)/radixTile, 1)
	return tiles, (radixDigits*tiles + scanTile - 1) / scanTile
}

// NewRadixSortScratch allocates on d the scratch to sort up to n pairs
// (n ≥ 1). Close frees it.
func NewRadixSortScratch(d *launch.Device, n int) (*RadixSortScratch, error) {
	if d == nil {
		return nil, fmt.Errorf("%w: nil device", ErrSortArgument)
	}
	if n < 1 || n > math.MaxInt32 {
		return nil, fmt.Errorf("%w: scratch for %d pairs (1..%d)", ErrSortArgument, n, math.MaxInt32)
	}
	tiles, histTiles := radixSizes(n)
	sc := &RadixSortScratch{n: n}
	for _, p := range []struct {
		b   **launch.Buffer[uint32]
		len int
	}{{&sc.keys, n}, {&sc.vals, n}, {&sc.hist, radixDigits * tiles}, {&sc.sums, histTiles + 1}} {
		b, err := launch.Alloc[uint32](d, p.len)
		if err != nil {
			_ = sc.Close()
			return nil, err
		}
		*p.b = b
	}
	return sc, nil
}

// Cap is the most pairs the scratch sorts.
func (sc *RadixSortScratch) Cap() int { return sc.n }

// Close frees the scratch; the caller must ensure no queued sort still uses
// it. Idempotent, and a no-op on nil.
func (sc *RadixSortScratch) Close() error {
	if sc == nil {
		return nil
	}
	var err error
	for _, b := range []*launch.Buffer[uint32]{sc.keys, sc.vals, sc.hist, sc.sums} {
		if b != nil {
			err = errors.Join(err, b.Close())
		}
	}
	return err
}

// RadixSort queues on s a sort of the first n keys ascending, carrying
// vals, in place: the device radix sort of the BVH build (rayd_radix_hist,
// rayd_scan_tiles, rayd_scan_sums and rayd_radix_scatter of the build
// module; RadixPasses passes of RadixBits-bit digits over all 32 bits),
// which is stable, so equal keys keep their input order. keys and vals are
// distinct buffers of at least n elements on s's device, and sc holds at
// least n pairs; no host synchronization. n = 0 queues nothing.
func RadixSort(s *launch.Stream, keys, vals *launch.Buffer[uint32], n int, sc *RadixSortScratch) error {
	if s == nil {
		return fmt.Errorf("%w: nil stream", ErrSortArgument)
	}
	if err := checkSort(keys, vals, n, sc); err != nil || n == 0 {
		return err
	}
	return radixSortOn(streamRunner{s}, keys, vals, n, sc)
}

// checkSort is RadixSort's check of its buffers and count.
func checkSort(keys, vals *launch.Buffer[uint32], n int, sc *RadixSortScratch) error {
	switch {
	case keys == nil || vals == nil:
		return fmt.Errorf("%w: nil keys or values", ErrSortArgument)
	case sc == nil:
		return fmt.Errorf("%w: nil scratch", ErrSortArgument)
	case n < 0 || n > math.MaxInt32:
		return fmt.Errorf("%w: %d pairs (0..%d)", ErrSortArgument, n, math.MaxInt32)
	case keys == vals || keys.Len() > 0 && keys.Addr() == vals.Addr():
		return fmt.Errorf("%w: keys and values share one buffer", ErrSortArgument)
	}
	for _, c := range []struct {
		what      string
		have, cap int
	}{{"RadixSort scratch", sc.n, n}, {"RadixSort keys", keys.Len(), n}, {"RadixSort values", vals.Len(), n}} {
		if c.have < c.cap {
			return fmt.Errorf("%w: %w", ErrSortArgument, &launch.LengthError{What: c.what, Want: c.cap, Got: c.have})
		}
	}
	return nil
}

// radixSortOn queues RadixSort's passes on r.
func radixSortOn(r runner, keys, vals *launch.Buffer[uint32], n int, sc *RadixSortScratch) error {
	tiles, histTiles := radixSizes(n)
	k := &kernelLauncher{r: r, module: ModuleBuild}
	queueRadixSort(k, keys, vals, sc.keys, sc.vals, sc.hist, sc.sums, n, tiles, histTiles)
	return k.err
}

// queueRadixSort queues the RadixPasses passes of the device radix sort of
// n (key, value) pairs in keys/vals, with keys2/vals2 as the other half of
// each pass, hist (256·tiles) and sums (histTiles+1) as the digit
// histograms. RadixPasses is even: the sorted pairs end in keys/vals.
func queueRadixSort(k *kernelLauncher, keys, vals, keys2, vals2, hist, sums *launch.Buffer[uint32], n, tiles, histTiles int) {
	kin, vin, kout, vout := keys, vals, keys2, vals2
	histLen := radixDigits * tiles
	for pass := range RadixPasses {
		shift := int32(pass * RadixBits)
		k.run("rayd_radix_hist", launch.Blocks(tiles, 1), launch.Threads(radixThreads), kin, int32(n), shift, hist, int32(tiles))
		k.run("rayd_scan_tiles", launch.Blocks(histTiles, 1), launch.Threads(scanThreads), hist, hist, int32(histLen), sums)
		k.run("rayd_scan_sums", launch.Blocks(1, 1), launch.Threads(1024), sums, int32(histTiles))
		k.run("rayd_radix_scatter", launch.Blocks(tiles, 1), launch.Threads(radixThreads),
			kin, vin, kout, vout, int32(n), shift, hist, sums, int32(tiles))
		kin, vin, kout, vout = kout, vout, kin, vin
	}
}
