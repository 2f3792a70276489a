package edge

import (
	"slices"

	"github.com/rayd-go/rayd/geom"
)

// Edges is the structure-of-arrays edge table of spec §1.3. Index i of every
// per-edge slice is the global edge id i.
//
// V0 < V1 are the global vertex ids of the edge's endpoints (the smaller and
// the larger local index plus the mesh's vertex offset). Face0 and Face1 are
// the mesh-local ids of the incident faces, Face1 = −1 for a boundary edge.
// Opposite is the global vertex of Face0 that is not on the edge. ShapeID is
// the mesh and LocalID the index of the edge within that mesh's edge list.
// Offset[m] is the global id of mesh m's first edge and Count[m] its number
// of edges (0 for a mesh with EdgesDisabled).
type Edges struct {
	V0, V1       []int32
	Face0, Face1 []int32
	Opposite     []int32
	ShapeID      []int32
	LocalID      []int32
	Offset       []int32
	Count        []int32
}

// Len is the number of edges E.
func (e *Edges) Len() int { return len(e.V0) }

// IsBoundary reports whether edge i has a single incident face.
func (e *Edges) IsBoundary(i int) bool { return e.Face1[i] < 0 }

// Topology builds the edge table of t. For every mesh without EdgesDisabled,
// each local face f = (a, b, c) yields the directed candidates a→b, b→c,
// c→a with candidate ids 3f, 3f+1, 3f+2, keyed by (min, max) local vertex.
// The candidates are stable-sorted by key and every run of equal keys, in
// ascending key order, becomes:
//   - one boundary edge (Face1 = −1) when the run has one candidate;
//   - one edge per pair of candidates i < j (positions in the run) otherwise,
//     ordered by i then j, with Face0 the face of candidate i and Face1 that
//     of candidate j; a manifold edge (two candidates) is the single pair.
//
// The opposite vertex of an edge is the third vertex of the face of its
// first candidate (c for a→b, a for b→c, b for c→a).
func Topology(t *geom.Tables) *Edges {
	m := t.NumMeshes()
	e := &Edges{Offset: make([]int32, m), Count: make([]int32, m)}
	var cand []int32
	for mesh := range m {
		e.Offset[mesh] = int32(e.Len())
		if t.EdgesDisabled[mesh] {
			continue
		}
		fo := int(t.FaceOffset[mesh])
		vo := t.VertexOffset[mesh]
		nf := t.MeshFaceCount(mesh)
		faces := t.Faces[3*fo : 3*(fo+nf)]
		key := func(c int32) (lo, hi int32) {
			f, k := c/3, c%3
			a, b := faces[3*f+k]-vo, faces[3*f+(k+1)%3]-vo
			return min(a, b), max(a, b)
		}
		cand = cand[:0]
		for c := range int32(3 * nf) {
			cand = append(cand, c)
		}
		slices.SortStableFunc(cand, func(x, y int32) int {
			xl, xh := key(x)
			yl, yh := key(y)
			if xl != yl {
				return int(xl) - int(yl)
			}
			return int(xh) - int(yh)
		})
		local := int32(0)
		add := func(ci, cj int32) {
			lo, hi := key(ci)
			f, k := ci/3, ci%3
			e.V0 = append(e.V0, lo+vo)
			e.V1 = append(e.V1, hi+vo)
			e.Face0 = append(e.Face0, f)
			if cj < 0 {
				e.Face1 = append(e.Face1, geom.InvalidID)
			} else {
				e.Face1 = append(e.Face1, cj/3)
			}
			e.Opposite = append(e.Opposite, faces[3*f+(k+2)%3])
			e.ShapeID = append(e.ShapeID, int32(mesh))
			e.LocalID = append(e.LocalID, local)
			local++
		}
		for start := 0; start < len(cand); {
			lo, hi := key(cand[start])
			end := start + 1
			for end < len(cand) {
				l2, h2 := key(cand[end])
				if l2 != lo || h2 != hi {
					break
				}
				end++
			}
			run := cand[start:end]
			if len(run) == 1 {
				add(run[0], -1)
			}
			for i := range run {
				for j := i + 1; j < len(run); j++ {
					add(run[i], run[j])
				}
			}
			start = end
		}
		e.Count[mesh] = local
	}
	return e
}
