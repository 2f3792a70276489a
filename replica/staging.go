package replica

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"

	"github.com/rayd-go/rayd/launch"
)

// stagingPool keeps the blocks a replica's chunks are staged in on one
// device (copied inputs, outputs, gathered results) for reuse: a chunk
// takes a free block at least as large as it needs, its stream waits for
// the block's previous use, and releasing the block records its last use.
// Blocks only grow (sizes in steps of an eighth of a power of two, from
// 64 KiB) and are freed at
// Close, so steady-state calls allocate nothing. Safe for concurrent use.
type stagingPool struct {
	d      *launch.Device
	mu     sync.Mutex
	free   []*stageBlock
	live   int // blocks handed out and not yet returned
	closed bool
}

// stageBlock is one block and the event of its last use (persistent, owned
// by the block).
type stageBlock struct {
	buf  *launch.Buffer[uint8]
	done *launch.Event
	used bool // done was recorded at least once
}

// minStage is the smallest block size.
const minStage = 64 << 10

// stageSize rounds a request up to the block size that serves it: a
// multiple of an eighth of the power of two below it, so that a block is at
// most 12.5% larger than the chunk that first asked for it and chunks of
// nearby sizes share blocks.
func stageSize(bytes int) int {
	if bytes <= minStage {
		return minStage
	}
	step := (1 << (bits.Len(uint(bytes-1)) - 1)) / 8
	return (bytes + step - 1) / step * step
}

// get returns a block of at least bytes bytes whose earlier uses s now
// waits for. It takes the smallest free block that fits; a free block too
// small for the request is freed first (after its last use) so the pool
// does not hoard stale sizes; a new block is allocated when none fits.
func (p *stagingPool) get(s *launch.Stream, bytes int) (*stageBlock, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, fmt.Errorf("replica: staging on %v: %w", p.d, launch.ErrClosed)
	}
	best := -1
	for i, b := range p.free {
		if b.buf.Len() >= bytes && (best < 0 || b.buf.Len() < p.free[best].buf.Len()) {
			best = i
		}
	}
	var b, stale *stageBlock
	switch {
	case best >= 0:
		b = p.free[best]
		p.free = append(p.free[:best], p.free[best+1:]...)
	case len(p.free) > 0:
		stale, p.free = p.free[0], p.free[1:]
	}
	p.live++
	p.mu.Unlock()
	if stale != nil {
		if err := stale.close(); err != nil {
			p.drop()
			return nil, err
		}
	}
	if b == nil {
		var err error
		if b, err = p.newBlock(stageSize(bytes)); err != nil {
			p.drop()
			return nil, err
		}
		return b, nil
	}
	if b.used {
		if err := s.Wait(b.done); err != nil {
			p.put(b, nil)
			return nil, err
		}
	}
	return b, nil
}

func (p *stagingPool) newBlock(size int) (*stageBlock, error) {
	buf, err := launch.Alloc[uint8](p.d, size)
	if err != nil {
		return nil, fmt.Errorf("replica: a %d-byte staging block on %v: %w", size, p.d, err)
	}
	done, err := p.d.NewEvent(false)
	if err != nil {
		return nil, errors.Join(err, buf.Close())
	}
	return &stageBlock{buf: buf, done: done}, nil
}

// drop forgets a block that get handed out and then failed to prepare.
func (p *stagingPool) drop() {
	p.mu.Lock()
	p.live--
	p.mu.Unlock()
}

// put returns b to the pool after the work queued on s (nil: after no
// further use); a block whose last use cannot be recorded is freed after
// the device's work instead.
func (p *stagingPool) put(b *stageBlock, s *launch.Stream) error {
	if s != nil {
		if err := b.done.Record(s); err != nil {
			p.drop()
			return errors.Join(err, s.Synchronize(), b.close())
		}
		b.used = true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.live--
	if p.closed {
		return b.close()
	}
	p.free = append(p.free, b)
	return nil
}

// close frees a block after its last use.
func (b *stageBlock) close() error {
	var err error
	if b.used {
		err = b.done.Synchronize()
	}
	return errors.Join(err, b.done.Close(), b.buf.Close())
}

// close frees the free blocks; blocks still handed out are freed when they
// come back.
func (p *stagingPool) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	var errs []error
	for _, b := range p.free {
		errs = append(errs, b.close())
	}
	p.free = nil
	return errors.Join(errs...)
}

// held is the memory the pool holds in free blocks and the number of
// blocks handed out.
func (p *stagingPool) held() (free int64, out int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range p.free {
		free += int64(b.buf.Len())
	}
	return free, p.live
}
