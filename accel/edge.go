package accel

import (
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/edge"
	"github.com/rayd-go/rayd/launch"
)

// PTX modules of the edge queries (ptx/src/edge.cu, edge_vjp.cu).
const (
	ModuleEdge    = "edge"
	ModuleEdgeVJP = "edge_vjp"
)

// EdgeThreads is the block size of the edge kernels (their
// __launch_bounds__; the brute-force scans stage one record per thread).
const EdgeThreads = 128

// MaxEdgeK is the largest k of NearestK (spec §5.3).
const MaxEdgeK = 16

// EdgeTables is the edge table of a scene (spec §1.3) by global edge id:
// the endpoint vertex ids (into the scene's global vertex table), the mesh
// and the local edge id of every edge, and its boundary flag.
type EdgeTables struct {
	V0, V1, ShapeID, LocalID []int32
	Boundary                 []bool
}

// EdgeTablesOf returns the device build input of the edge table et (the
// slices are shared, the boundary flags computed).
func EdgeTablesOf(et *edge.Edges) EdgeTables {
	b := make([]bool, et.Len())
	for i := range b {
		b[i] = i < len(et.Face1) && et.IsBoundary(i) // a short Face1 is not read past its end
	}
	return EdgeTables{V0: et.V0, V1: et.V1, ShapeID: et.ShapeID, LocalID: et.LocalID, Boundary: b}
}

// Len is the number of edges E.
func (e *EdgeTables) Len() int { return len(e.V0) }

func (e *EdgeTables) check(numVerts int) error {
	n := len(e.V0)
	if len(e.V1) != n || len(e.ShapeID) != n || len(e.LocalID) != n || len(e.Boundary) != n {
		return fmt.Errorf("accel: edge tables differ in length (%d, %d, %d, %d, %d)",
			n, len(e.V1), len(e.ShapeID), len(e.LocalID), len(e.Boundary))
	}
	if n >= MaxTriangles {
		return fmt.Errorf("%w: %d edges (limit %d)", ErrTooLarge, n, MaxTriangles-1)
	}
	for i := range n {
		if e.V0[i] < 0 || int(e.V0[i]) >= numVerts || e.V1[i] < 0 || int(e.V1[i]) >= numVerts {
			return fmt.Errorf("accel: edge %d references a vertex outside [0,%d)", i, numVerts)
		}
	}
	return nil
}

// EdgeBVH is the edge BVH of spec §5.5 in device memory: the triangle BVH
// builder run over one degenerate triangle (v0, v1, v1) per edge, so its
// nodes are the child-pair nodes of Layout and its records, in leaf order,
// hold (a, global edge id) (b, shape id) (b, local edge id). The edge mask
// and boundary flags live beside it by global edge id. An EdgeBVH with no
// edges answers every query with misses.
//
// An EdgeBVH belongs to one device; queries on different streams may share
// it; Build, Refit, SetMask and Close must not overlap anything else.
type EdgeBVH struct {
	dev      *launch.Device
	bvh      *BVH // nil when there are no edges
	numEdges int
	v0, v1   *launch.Buffer[int32]
	boundary *launch.Buffer[uint8]
	mask     *launch.Buffer[uint8] // nil: every edge enabled
}

// BuildEdges uploads vertices (3 per global vertex) and the edge table e and
// builds the edge BVH on s (LBVH, child-pair nodes, EdgeOptions, refit data
// kept). It returns after the build has completed.
func BuildEdges(s *launch.Stream, vertices []float32, e EdgeTables) (*EdgeBVH, error) {
	return BuildEdgesWith(s, vertices, e, EdgeOptions)
}

// EdgeOptions are the build options of the edge BVH: child-pair nodes (the
// edge kernels read no other layout) and the default SAH collapse.
var EdgeOptions = Options{Width: 2}

// BuildEdgesWith is BuildEdges with explicit options (Width must be 2).
func BuildEdgesWith(s *launch.Stream, vertices []float32, e EdgeTables, opt Options) (_ *EdgeBVH, err error) {
	if opt.Width != 2 {
		return nil, fmt.Errorf("accel: the edge BVH has child-pair nodes (Width 2), not %d", opt.Width)
	}
	if len(vertices)%3 != 0 {
		return nil, fmt.Errorf("accel: %d vertex floats is not a multiple of 3", len(vertices))
	}
	if err := e.check(len(vertices) / 3); err != nil {
		return nil, err
	}
	b := &EdgeBVH{dev: s.Device(), numEdges: e.Len()}
	defer func() {
		if err != nil {
			_ = b.Close()
		}
	}()
	if b.numEdges == 0 {
		return b, nil
	}
	faces := make([]int32, 3*b.numEdges)
	bnd := make([]uint8, b.numEdges)
	for i := range b.numEdges {
		faces[3*i], faces[3*i+1], faces[3*i+2] = e.V0[i], e.V1[i], e.V1[i]
		if e.Boundary[i] {
			bnd[i] = 1
		}
	}
	if b.v0, err = upload(s, b.dev, e.V0); err != nil {
		return nil, err
	}
	if b.v1, err = upload(s, b.dev, e.V1); err != nil {
		return nil, err
	}
	if b.boundary, err = upload(s, b.dev, bnd); err != nil {
		return nil, err
	}
	var g Geometry
	closeGeo := func() {
		for _, c := range []interface{ Close() error }{g.Vertices, g.Faces, g.FaceShape, g.FaceLocal} {
			if c != nil {
				_ = c.Close()
			}
		}
	}
	if g.Vertices, err = upload(s, b.dev, vertices); err == nil {
		if g.Faces, err = upload(s, b.dev, faces); err == nil {
			if g.FaceShape, err = upload(s, b.dev, e.ShapeID); err == nil {
				g.FaceLocal, err = upload(s, b.dev, e.LocalID)
			}
		}
	}
	if err != nil {
		closeGeo()
		return nil, fmt.Errorf("accel: upload edge tables: %w", err)
	}
	if b.bvh, err = BuildGeometry(s, g, opt, true); err != nil {
		closeGeo()
		return nil, fmt.Errorf("accel: edge BVH: %w", err)
	}
	b.bvh.ownsGeo = true
	return b, nil
}

// NumEdges is E.
func (b *EdgeBVH) NumEdges() int { return b.numEdges }

// Device returns the device the BVH lives on.
func (b *EdgeBVH) Device() *launch.Device { return b.dev }

// Tree returns the underlying BVH (nil without edges): its Nodes and Tris
// are the traversal layout the edge kernels read.
func (b *EdgeBVH) Tree() *BVH { return b.bvh }

// Refit uploads new vertex positions (same count as at the build) and refits
// the boxes over the kept tree; queued on s. The edge table, the mask and
// the tree's topology stay.
func (b *EdgeBVH) Refit(s *launch.Stream, vertices []float32) error {
	if b.bvh == nil {
		return nil
	}
	if len(vertices) != b.bvh.geo.Vertices.Len() {
		return fmt.Errorf("%w: %d vertex floats (built with %d)", ErrTopology, len(vertices), b.bvh.geo.Vertices.Len())
	}
	if err := b.bvh.geo.Vertices.Upload(s, vertices); err != nil {
		return err
	}
	return b.bvh.RefitGeometry(s)
}

// SetMask installs the edge mask (spec §5.6): one entry per edge, false
// removing the edge from every query; nil or empty clears it. Queued on s.
func (b *EdgeBVH) SetMask(s *launch.Stream, mask []bool) error {
	if len(mask) != 0 && len(mask) != b.numEdges {
		return fmt.Errorf("accel: edge mask has %d entries, want %d", len(mask), b.numEdges)
	}
	if len(mask) == 0 {
		err := b.mask.Close()
		b.mask = nil
		return err
	}
	m := make([]uint8, len(mask))
	for i, v := range mask {
		if v {
			m[i] = 1
		}
	}
	if b.mask == nil {
		buf, err := launch.AllocAsync[uint8](s, len(m))
		if err != nil {
			return err
		}
		b.mask = buf
	}
	return b.mask.Upload(s, m)
}

// Close frees the device memory. Idempotent. No queued work may still use
// the BVH.
func (b *EdgeBVH) Close() error {
	var errs []error
	if b.bvh != nil {
		errs = append(errs, b.bvh.Close())
		b.bvh = nil
	}
	for _, p := range []**launch.Buffer[int32]{&b.v0, &b.v1} {
		if *p != nil {
			errs = append(errs, (*p).Close())
			*p = nil
		}
	}
	for _, p := range []**launch.Buffer[uint8]{&b.boundary, &b.mask} {
		if *p != nil {
			errs = append(errs, (*p).Close())
			*p = nil
		}
	}
	return errors.Join(errs...)
}
