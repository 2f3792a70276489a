package replica

import (
	"errors"
	"fmt"
	"slices"

	"github.com/rayd-go/rayd/accel"
	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/geom"
)

// edgeState is a replica's edge BVH (operations spec §5.5), built from the
// replica's own copy of the tables on the first task that needs it and
// kept in step with the synced vertices and the edge mask by Apply. It is
// guarded by Replica.mu.
type edgeState struct {
	table *edge.Edges    // the scene's edge table, computed on first use
	bvh   *accel.EdgeBVH // nil until the first edge task
}

// edgeTable returns the edge table of the replica's tables, computing it on
// first use (the table depends on the faces alone, which never change).
// r.mu is held.
func (r *Replica) edgeTable() *edge.Edges {
	if r.edge.table == nil {
		r.edge.table = edge.Topology(r.tables)
	}
	return r.edge.table
}

// EdgeBVH returns the replica's edge BVH, or nil before its first edge task
// (for inspection; it must not be mutated or closed).
func (r *Replica) EdgeBVH() *accel.EdgeBVH {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.edge.bvh
}

// edgeBVH returns the edge BVH. The first call builds it on main from the
// synced vertices, installs the current mask there and makes compute and
// side wait for both (accel.BuildEdges returns once the build has
// completed); it does so under r.mu before any launch can read the BVH, so
// every such launch is ordered after the build. Later refits and masks are
// issued by Apply on main, which orders them the same way.
func (r *Replica) edgeBVH() (*accel.EdgeBVH, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.edge.bvh != nil {
		return r.edge.bvh, nil
	}
	b, err := accel.BuildEdges(r.main, r.tables.Vertices, accel.EdgeTablesOf(r.edgeTable()))
	if err != nil {
		return nil, fmt.Errorf("replica: building the edge BVH on cuda:%d: %w", r.Device(), err)
	}
	if len(r.mask) > 0 {
		err = b.SetMask(r.main, r.mask)
	}
	if err == nil {
		err = r.beforeLaunches()
	}
	if err != nil {
		err = errors.Join(err, r.main.Synchronize(), b.Close())
		return nil, fmt.Errorf("replica: the edge BVH on cuda:%d: %w", r.Device(), err)
	}
	r.edge.bvh = b
	return b, nil
}

// refitEdges refits a built edge BVH to the synced vertices on main. r.mu
// is held.
func (r *Replica) refitEdges() error {
	if r.edge.bvh == nil {
		return nil
	}
	if err := r.edge.bvh.Refit(r.main, r.tables.Vertices); err != nil {
		return fmt.Errorf("replica: edge refit on cuda:%d: %w", r.Device(), err)
	}
	return nil
}

// setEdgeMask records mask (nil or empty: every edge enabled) after
// checking its length against the edge table, and installs it on a built
// edge BVH on main. r.mu is held.
func (r *Replica) setEdgeMask(mask []bool) error {
	if n := len(mask); n > 0 && n != r.edgeTable().Len() {
		return &geom.LengthError{Field: "mask", Want: r.edgeTable().Len(), Got: n, PerRow: 1}
	}
	if r.edge.bvh != nil {
		if err := r.afterLaunches(); err != nil {
			return err
		}
		if err := r.edge.bvh.SetMask(r.main, mask); err != nil {
			return fmt.Errorf("replica: edge mask on cuda:%d: %w", r.Device(), err)
		}
		if err := r.beforeLaunches(); err != nil {
			return err
		}
	}
	r.mask = slices.Clone(mask)
	return nil
}

// closeEdges frees the edge BVH (the streams are idle). Idempotent.
func (r *Replica) closeEdges() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.edge.bvh == nil {
		return nil
	}
	err := r.edge.bvh.Close()
	r.edge.bvh = nil
	return err
}
