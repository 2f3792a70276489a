package replica

import (
	"fmt"
	"sync"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/shard"
)

// group is the set of replicas one Builder built: a remote reaches its
// master's BVH through it (the compact path expands on the master).
type group struct {
	mu     sync.Mutex
	master *Replica
}

func (g *group) setMaster(r *Replica) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.master = r
}

// masterBVH returns the BVH of the group's master, or nil before it is
// built (or without a group).
func (g *group) masterBVH() *accel.BVH {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.master == nil || g.master.closed.Load() {
		return nil
	}
	return g.master.bvh
}

// compactable reports whether an intersect with flags writes more than
// the compact record would (t alone is 4 bytes a row, a compact record 16).
func compactable(flags geom.Flags) bool { return flags != geom.FlagsNone }

// compactRoute is the path of a direct device intersect: compact when it
// is asked for, or chosen (want auto) for a remote on another device, whose
// link then carries 16 bytes a row instead of the whole record; the master
// expands the records with its own BVH, built from the same tables by the
// same deterministic build, so a slot names the same triangle there. The
// compact kernels have no masked form: with a mesh mask set the records
// travel whole.
func (r *Replica) compactRoute(t *DeviceIntersect, want shard.Transfer) shard.Path {
	if !compactable(t.Flags) || r.group.masterBVH() == nil || r.bvh.Masked() {
		return shard.PathPeerDirect
	}
	switch {
	case want == shard.TransferCompact, want == shard.TransferAuto && r.dev != r.master:
		return shard.PathCompact
	}
	return shard.PathPeerDirect
}

// launchCompact queues a compact intersect of rows [lo, hi) on s, writing
// its 16-byte records into a staging block on the master (peer writes, or
// local ones for a remote on the master's device). The returned payload
// holds the block and the input views the expansion reads.
func (r *Replica) launchCompact(t *DeviceIntersect, k kernels, s *launch.Stream, in *payload, lo, hi int) (*payload, error) {
	n := hi - lo
	out := &payload{rep: r, dev: r.master.d, lo: lo, hi: hi, last: s, path: shard.PathCompact, in: in.cols}
	words := accel.CompactWords * n
	if words > 0 {
		st, err := r.masterStage.get(s, 4*words)
		if err != nil {
			return nil, err
		}
		out.cols = columns{stage: st, pool: r.masterStage}
		if out.compact, err = launch.Cast[uint32](st.buf, 0, words); err != nil {
			return nil, fmt.Errorf("replica: compact records: %w", err)
		}
		out.owned = true
	}
	if err := k.bvh.IntersectCompact(s, k.rays(in.cols, n), out.compact); err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

// gatherCompact expands a remote's compact records into the caller's rows
// on the master: on this remote's recv stream (a stream of the master),
// after ready, with the master's BVH; the staging block is released there.
func (r *Replica) gatherCompact(t *DeviceIntersect, p *payload, ready shard.Event) (shard.Payload, shard.Event, error) {
	bvh := r.group.masterBVH()
	if bvh == nil {
		return nil, nil, fmt.Errorf("replica: cuda:%d: the master's BVH is gone: %w", r.Device(), launch.ErrClosed)
	}
	s := r.recv
	if err := waitOn(s, ready); err != nil {
		return nil, nil, err
	}
	p.used(s)
	dst, err := hitsCols(t.Out).view(hitsLayout(t.Flags), p.lo, p.hi)
	if err != nil {
		return nil, nil, err
	}
	n := p.rows()
	rays := accel.Rays{O: p.in.f32[0], D: p.in.f32[1], N: n} // the expansion reads o and d only
	if n > 0 {
		if err := bvh.ExpandHits(s, rays, p.compact, t.Flags, hitsOf(dst)); err != nil {
			return nil, nil, fmt.Errorf("replica: expanding rows [%d,%d) on the master: %w", p.lo, p.hi, err)
		}
	}
	ev, err := r.record(s)
	if err != nil {
		return nil, nil, err
	}
	p.Release() // the block returns to the pool after the expansion
	return &payload{rep: r, dev: r.master.d, cols: dst, lo: p.lo, hi: p.hi, path: shard.PathCompact}, ev, nil
}
