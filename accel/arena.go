package accel

import (
	"github.com/rayd-go/rayd/launch"
)

// arena carves many 4-byte-element device arrays out of one allocation, so a
// build costs a handful of cuMemAlloc calls instead of twenty. Every array
// starts on a 256-byte boundary (float4 loads need 16).
type arena struct {
	buf   *launch.Buffer[uint32]
	words int
	sizes []int
	views []**launch.Buffer[uint32]
}

const arenaAlign = 64 // words

// add reserves n words and arranges for *dst to become their view.
func (a *arena) add(dst **launch.Buffer[uint32], n int) {
	a.views = append(a.views, dst)
	a.sizes = append(a.sizes, n)
}

// alloc allocates the arena in stream order on s and sets every view.
func (a *arena) alloc(s *launch.Stream) error {
	offs := make([]int, len(a.sizes))
	total := 0
	for i, n := range a.sizes {
		offs[i] = total
		total += (n + arenaAlign - 1) / arenaAlign * arenaAlign
	}
	buf, err := launch.AllocAsync[uint32](s, max(total, 1))
	if err != nil {
		return err
	}
	a.buf, a.words = buf, total
	for i, dst := range a.views {
		if *dst, err = buf.View(offs[i], a.sizes[i]); err != nil {
			_ = buf.Close()
			return err
		}
	}
	return nil
}

// Close frees the arena (its views become invalid).
func (a *arena) Close() error {
	if a == nil || a.buf == nil {
		return nil
	}
	err := a.buf.Close()
	a.buf = nil
	return err
}
