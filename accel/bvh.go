package accel

import (
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
)

// PTX modules of this package (ptx/src/<module>.cu).
const (
	ModuleBuild = "bvh_build"
	ModuleTrace = "trace"
)

// Errors of Build and Refit.
var (
	// ErrEmpty: the geometry has no faces.
	ErrEmpty = errors.New("accel: geometry has no faces")
	// ErrTooLarge: more faces than MaxTriangles−1.
	ErrTooLarge = errors.New("accel: too many faces for one BVH")
	// ErrNotRefittable: the BVH kept no refit data (no dynamic mesh at build).
	ErrNotRefittable = errors.New("accel: BVH was built without refit data")
	// ErrTopology: Refit got a different face or vertex count.
	ErrTopology = errors.New("accel: refit geometry differs in topology")
	// ErrWidth: the query has no kernel for the BVH's node layout
	// (crossings, closest point and instances walk widths 2 and 4 only).
	ErrWidth = errors.New("accel: the query has no kernel for this BVH node width")
)

// Geometry is a device-resident copy of the global tables of spec §1.2.
// FaceShape and FaceLocal may be nil (the triangle records then hold −1).
type Geometry struct {
	Vertices  *launch.Buffer[float32] // 3 per vertex
	Faces     *launch.Buffer[int32]   // 3 global vertex indices per face
	FaceShape *launch.Buffer[int32]   // mesh id per face
	FaceLocal *launch.Buffer[int32]   // local face index per face
}

// BVH is a triangle BVH in device memory in the layout of Layout: NumNodes
// nodes (child-pair, quad or wide, Options.Width) and NumTris triangle
// records, plus (when refittable) the radix tree a Refit reuses. It belongs to one device; queries on different
// streams may share it; Build, Refit and Close must not overlap anything else.
type BVH struct {
	dev      *launch.Device
	opt      Options
	numTris  int
	numNodes int
	height   int
	nodes    *launch.Buffer[uint32] // NodeWords (Width 8: WideNodeWords) per node (float4 on the device)
	tris     *launch.Buffer[uint32] // TriWords per triangle

	sms       int // multiprocessors (persistent query grids)
	geo       Geometry
	ownsGeo   bool
	numVerts  int
	refitData *arena // nil: not refittable
	kept      buildViews
	faceMask  *launch.Buffer[uint8] // nil: every mesh has the default mask (masks.go)
}

// buildViews are the device arrays of one build (views into arenas).
type buildViews struct {
	status, faceBoxes, keys, vals, keys2, vals2, hist, histSums *launch.Buffer[uint32]
	child, parent, first, count, counter, nodeBox, cost, info   *launch.Buffer[uint32]
	flags, idx, idxSums                                         *launch.Buffer[uint32]
	wideSlots, wideCounts, wideRoot, wideBase, wideOrder        *launch.Buffer[uint32] // Width 8 collapse
}

// NumTris is the number of triangles (faces).
func (b *BVH) NumTris() int { return b.numTris }

// NumNodes is the number of nodes (of the layout's width).
func (b *BVH) NumNodes() int { return b.numNodes }

// Height is the number of nodes on the longest root-to-leaf path.
func (b *BVH) Height() int { return b.height }

// Device returns the BVH's device.
func (b *BVH) Device() *launch.Device { return b.dev }

// Width is the node layout: 2 (child-pair nodes), 4 (quad nodes) or 8
// (compressed wide nodes).
func (b *BVH) Width() int { return b.opt.Width }

// Nodes and Tris expose the traversal layout for kernels of other packages.
func (b *BVH) Nodes() *launch.Buffer[uint32] { return b.nodes }

// Tris returns the triangle records (see Layout).
func (b *BVH) Tris() *launch.Buffer[uint32] { return b.tris }

// Refittable reports whether Refit is available.
func (b *BVH) Refittable() bool { return b.refitData != nil }

// Build uploads the global tables of t and builds their BVH on s with the
// default Options. The BVH keeps refit data when some mesh of t is dynamic.
// Build returns after the build has completed (it reads the build status).
func Build(s *launch.Stream, t *geom.Tables) (*BVH, error) {
	return BuildWith(s, t, Options{})
}

// BuildWith is Build with explicit options.
func BuildWith(s *launch.Stream, t *geom.Tables, opt Options) (*BVH, error) {
	nf := t.NumFaces()
	if nf == 0 {
		return nil, ErrEmpty
	}
	d := s.Device()
	var g Geometry
	var err error
	closeGeo := func() {
		for _, c := range []interface{ Close() error }{g.Vertices, g.Faces, g.FaceShape, g.FaceLocal} {
			if c != nil {
				_ = c.Close()
			}
		}
	}
	if g.Vertices, err = upload(s, d, t.Vertices); err == nil {
		if g.Faces, err = upload(s, d, t.Faces); err == nil {
			if g.FaceShape, err = upload(s, d, t.FaceShape); err == nil {
				g.FaceLocal, err = upload(s, d, t.FaceLocal)
			}
		}
	}
	if err != nil {
		closeGeo()
		return nil, fmt.Errorf("accel: upload tables: %w", err)
	}
	keep := false
	for _, dyn := range t.Dynamic {
		keep = keep || dyn
	}
	b, err := BuildGeometry(s, g, opt, keep)
	if err != nil {
		closeGeo()
		return nil, err
	}
	b.ownsGeo = true
	return b, nil
}

func upload[T launch.Elem](s *launch.Stream, d *launch.Device, src []T) (*launch.Buffer[T], error) {
	buf, err := launch.AllocAsync[T](s, len(src))
	if err != nil {
		return nil, err
	}
	if err := buf.Upload(s, src); err != nil {
		_ = buf.Close()
		return nil, err
	}
	return buf, nil
}

// BuildGeometry builds the BVH of device-resident tables on s. g must stay
// alive and unchanged while the BVH is used (it is not copied); keepRefit
// keeps the radix tree for Refit. It returns after the build has completed.
func BuildGeometry(s *launch.Stream, g Geometry, opt Options, keepRefit bool) (*BVH, error) {
	if opt.Width == 0 && g.Faces != nil {
		opt.Width = AutoWidth(g.Faces.Len()/3, s.Device().L2Bytes())
		if opt.Width == 8 && (keepRefit || opt.MaxLeafSize > WideMaxLeafSize) {
			opt.Width = 4 // wide nodes are rebuilt, not refitted, and hold leaves ≤ WideMaxLeafSize
		}
	}
	if opt.Width == 8 && keepRefit {
		return nil, fmt.Errorf("%w: Width 8 nodes are not refittable", ErrNotRefittable)
	}
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	n := g.Faces.Len() / 3
	switch {
	case n == 0:
		return nil, ErrEmpty
	case n >= MaxTriangles:
		return nil, fmt.Errorf("%w: %d faces (limit %d)", ErrTooLarge, n, MaxTriangles-1)
	case g.FaceShape != nil && g.FaceShape.Len() < n, g.FaceLocal != nil && g.FaceLocal.Len() < n:
		return nil, fmt.Errorf("accel: FaceShape/FaceLocal shorter than %d faces", n)
	}
	d := s.Device()
	b := &BVH{dev: d, opt: opt, numTris: n, geo: g, numVerts: g.Vertices.Len() / 3, sms: defaultSMs}
	if sms := d.SMs(); sms > 0 {
		b.sms = sms
	}
	// Stream-ordered allocations: cheap from the device's pool after the
	// first build; the build's final status read orders them for every
	// other stream.
	// At most n−1 nodes of any width: every node but the root stands for a
	// distinct internal node of the radix tree other than its root.
	if b.nodes, err = launch.AllocAsync[uint32](s, nodeWords(opt.Width)*max(n-1, 1)); err != nil {
		return nil, err
	}
	if b.tris, err = launch.AllocAsync[uint32](s, TriWords*n); err != nil {
		_ = b.Close()
		return nil, err
	}
	// Kept (refit) arrays and scratch arrays live in two arenas.
	var keepA, tmpA arena
	v := &b.kept
	ni := max(n-1, 0)
	tiles := (n + radixTile - 1) / radixTile
	idxTiles := (ni + scanTile - 1) / scanTile
	histTiles := (radixDigits*tiles + scanTile - 1) / scanTile
	kp := &tmpA // arrays a refit reuses
	if keepRefit {
		kp = &keepA
	}
	kp.add(&v.faceBoxes, 6*n)
	kp.add(&v.vals, n)
	kp.add(&v.child, 2*ni)
	kp.add(&v.parent, 2*n-1)
	kp.add(&v.first, ni)
	kp.add(&v.count, ni)
	kp.add(&v.counter, ni)
	kp.add(&v.nodeBox, 6*(2*n-1))
	kp.add(&v.info, 2*n-1)
	kp.add(&v.flags, ni)
	kp.add(&v.idx, ni)
	kp.add(&v.idxSums, idxTiles+1)
	kp.add(&v.status, statusWords)
	tmpA.add(&v.keys, n)
	tmpA.add(&v.keys2, n)
	tmpA.add(&v.vals2, n)
	tmpA.add(&v.hist, radixDigits*tiles)
	tmpA.add(&v.histSums, histTiles+1)
	tmpA.add(&v.cost, 2*n-1)
	if opt.Width == 8 {
		tmpA.add(&v.wideSlots, 8*max(ni, 1))
		tmpA.add(&v.wideCounts, max(ni, 1))
		tmpA.add(&v.wideRoot, max(ni, 1))
		tmpA.add(&v.wideBase, 2*max(ni, 1))
		tmpA.add(&v.wideOrder, n)
	}
	if keepRefit {
		if err := keepA.alloc(s); err != nil {
			_ = b.Close()
			return nil, err
		}
		b.refitData = &keepA
	}
	if err := tmpA.alloc(s); err != nil {
		_ = b.Close()
		return nil, err
	}
	err = b.runBuild(streamRunner{s}, tiles, histTiles, idxTiles)
	var st []uint32
	if err == nil {
		st = make([]uint32, statusWords)
		err = v.status.Download(s, st) // waits for the build
	}
	if cerr := tmpA.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = b.Close()
		return nil, fmt.Errorf("accel: build: %w", err)
	}
	b.numNodes, b.height = int(st[statusNodes]), int(st[statusHeight])
	if st[statusFlags]&FlagDepthExceeded != 0 || b.height > MaxDepth {
		_ = b.Close()
		return nil, fmt.Errorf("%w: height %d", ErrDepthExceeded, b.height)
	}
	switch opt.Width {
	case 4: // the status holds the child-pair height (Width 8: the wide height)
		b.height = (b.height + 1) / 2
	case 8:
		if err := b.shrinkWide(s); err != nil {
			_ = b.Close()
			return nil, fmt.Errorf("accel: build: %w", err)
		}
	}
	if !keepRefit {
		b.kept = buildViews{}
	}
	return b, nil
}

// Close frees the BVH's device memory (and the uploaded tables of Build).
// Idempotent. No queued work may still use the BVH.
func (b *BVH) Close() error {
	var errs []error
	for _, buf := range []*launch.Buffer[uint32]{b.nodes, b.tris} {
		if buf != nil {
			errs = append(errs, buf.Close())
		}
	}
	b.nodes, b.tris = nil, nil
	errs = append(errs, b.faceMask.Close())
	b.faceMask = nil
	errs = append(errs, b.refitData.Close())
	b.refitData = nil
	if b.ownsGeo {
		for _, c := range []interface{ Close() error }{b.geo.Vertices, b.geo.Faces, b.geo.FaceShape, b.geo.FaceLocal} {
			if c != nil {
				errs = append(errs, c.Close())
			}
		}
		b.ownsGeo = false
	}
	return errors.Join(errs...)
}

// Refit uploads the vertices of t (same meshes, same topology as at Build)
// and refits: triangle records and boxes are recomputed bottom-up over the
// kept tree; the topology and leaf choices stay. Returns when queued (the
// BVH may be queried on s right after; other streams must wait for s).
func (b *BVH) Refit(s *launch.Stream, t *geom.Tables) error {
	if !b.ownsGeo {
		return fmt.Errorf("accel: Refit: the BVH was built from device geometry; use RefitGeometry")
	}
	if t.NumFaces() != b.numTris || len(t.Vertices) != b.geo.Vertices.Len() {
		return fmt.Errorf("%w: %d faces, %d vertex floats (built with %d, %d)", ErrTopology,
			t.NumFaces(), len(t.Vertices), b.numTris, b.geo.Vertices.Len())
	}
	if b.refitData == nil {
		return ErrNotRefittable
	}
	if err := b.geo.Vertices.Upload(s, t.Vertices); err != nil {
		return err
	}
	return b.RefitGeometry(s)
}

// RefitGeometry refits after the caller changed the vertices of the device
// geometry the BVH was built from (same buffers, same topology).
func (b *BVH) RefitGeometry(s *launch.Stream) error {
	if b.refitData == nil {
		return ErrNotRefittable
	}
	return b.runRefit(streamRunner{s})
}

// DownloadLayout copies the traversal layout to the host (waits for s).
func (b *BVH) DownloadLayout(s *launch.Stream) (*Layout, error) {
	l := &Layout{Width: b.opt.Width, NumTris: b.numTris, NumNodes: b.numNodes, Height: b.height,
		Nodes: make([]uint32, b.numNodes*nodeWords(b.opt.Width)), Tris: make([]uint32, b.numTris*TriWords)}
	if err := b.nodes.Download(s, l.Nodes); err != nil {
		return nil, err
	}
	if err := b.tris.Download(s, l.Tris); err != nil {
		return nil, err
	}
	l.Order = make([]int32, b.numTris)
	for k := range l.Order {
		l.Order[k] = int32(l.Tris[k*TriWords+3])
	}
	return l, nil
}
