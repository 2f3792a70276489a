package accel

import (
	"errors"
	"fmt"
	"math"

	"github.com/rayd-go/rayd/geom"
)

// ErrDepthExceeded reports a tree taller than MaxDepth (the traversal stack
// could overflow); the build is rejected.
var ErrDepthExceeded = errors.New("accel: BVH deeper than the traversal stack")

// BuildHost builds the traversal layout of t on the CPU with exactly the
// algorithm and float32 operation sequence of the device build
// (ptx/src/bvh_build.cu), so the two layouts are identical bit for bit:
//
//  1. per-face AABB (min/max of the three vertices) and centroid
//     c = (lo+hi)·0.5; scene bounds of the centroids (not of the boxes);
//  2. 30-bit Morton code of each centroid: per axis x = (c−min)/extent
//     (0.5 when extent ≤ 0), clamped to [0,1], floor(x·1023), bits
//     interleaved X<<2 | Y<<1 | Z;
//  3. stable LSD radix sort of (code, prim) pairs, 8-bit digits;
//  4. Karras radix tree over the sorted codes (equal codes ordered by index);
//  5. bottom-up boxes, primitive counts, SAH costs, leaf choices (≤
//     MaxLeafSize triangles) and collapsed heights;
//  6. emission of the child-pair nodes in Karras index order (compacted) with
//     inflated boxes, and of the triangles in sorted order.
//
// The tree's height must be ≤ MaxDepth; a taller tree is still returned,
// with FlagDepthExceeded set, and BuildHost reports an error as well.
func BuildHost(t *geom.Tables, opt Options) (*Layout, error) {
	return buildHost(t.Vertices, t.Faces, t.FaceShape, t.FaceLocal, opt)
}

// hostTree holds the Karras tree and the bottom-up data of a host build.
// Node numbering as on the device: internal nodes 0..n−2 (root 0), leaf k
// is node n−1+k.
type hostTree struct {
	n      int
	keys   []uint32 // sorted Morton codes
	order  []int32  // sorted prim ids
	child  []int32  // 2 per internal node
	parent []int32  // per node (root: −1)
	first  []int32  // per internal node: first sorted slot of its range
	count  []int32  // per internal node: primitive count
	box    [][6]float32
	cost   []float32
	info   []int32 // height<<1 | leaf choice
}

func buildHost(verts []float32, faces, shape, local []int32, opt Options) (*Layout, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	n := len(faces) / 3
	if n < 1 {
		return nil, fmt.Errorf("accel: BuildHost: no faces")
	}
	if n >= MaxTriangles {
		return nil, fmt.Errorf("accel: BuildHost: %d faces (limit %d)", n, MaxTriangles-1)
	}
	boxes := make([][6]float32, n)
	for f := range n {
		boxes[f] = faceBox(verts, faces, f)
	}
	bmin, bmax := centroidBounds(boxes)
	keys := make([]uint32, n)
	vals := make([]int32, n)
	for f := range n {
		keys[f] = mortonCode(boxes[f], bmin, bmax)
		vals[f] = int32(f)
	}
	radixSortPairs(keys, vals)
	tr := karras(keys, vals)
	tr.bottomUp(boxes, opt)
	lay := tr.emit(verts, faces, shape, local, opt)
	if lay.Flags&FlagDepthExceeded != 0 {
		return lay, fmt.Errorf("%w: height %d", ErrDepthExceeded, lay.Height)
	}
	return lay, nil
}

// min2 and max2 are the device's select-based min/max: the second operand
// only when it compares strictly smaller (larger).
func min2(a, b float32) float32 {
	if b < a {
		return b
	}
	return a
}

func max2(a, b float32) float32 {
	if b > a {
		return b
	}
	return a
}

// faceBox returns lo.xyz, hi.xyz of global face f.
func faceBox(verts []float32, faces []int32, f int) [6]float32 {
	var b [6]float32
	i0, i1, i2 := int(faces[3*f]), int(faces[3*f+1]), int(faces[3*f+2])
	for c := range 3 {
		a, p, q := verts[3*i0+c], verts[3*i1+c], verts[3*i2+c]
		b[c] = min2(min2(a, p), q)
		b[3+c] = max2(max2(a, p), q)
	}
	return b
}

// centroid of box component c: (lo+hi)·0.5.
func centroid(b *[6]float32, c int) float32 {
	return float32(b[c]+b[3+c]) * 0.5
}

// orderedKey maps a float32 to a uint32 whose unsigned order is the float
// order (−0 below +0); the device reduces scene bounds with integer atomics
// on these keys.
func orderedKey(f float32) uint32 {
	b := math.Float32bits(f)
	if b&0x80000000 != 0 {
		return ^b
	}
	return b | 0x80000000
}

func orderedFloat(k uint32) float32 {
	if k&0x80000000 != 0 {
		return math.Float32frombits(k &^ 0x80000000)
	}
	return math.Float32frombits(^k)
}

// centroidBounds is the per-axis min/max of the finite centroids (±Inf when
// none), as the device computes it with ordered-key atomics.
func centroidBounds(boxes [][6]float32) (bmin, bmax [3]float32) {
	kmin := [3]uint32{orderedKey(float32(math.Inf(1))), orderedKey(float32(math.Inf(1))), orderedKey(float32(math.Inf(1)))}
	kmax := [3]uint32{orderedKey(float32(math.Inf(-1))), orderedKey(float32(math.Inf(-1))), orderedKey(float32(math.Inf(-1)))}
	for i := range boxes {
		for c := range 3 {
			x := centroid(&boxes[i], c)
			if float32(x-x) != 0 { // NaN or ±Inf
				continue
			}
			k := orderedKey(x)
			kmin[c] = min(kmin[c], k)
			kmax[c] = max(kmax[c], k)
		}
	}
	for c := range 3 {
		bmin[c], bmax[c] = orderedFloat(kmin[c]), orderedFloat(kmax[c])
	}
	return bmin, bmax
}

// expandBits spreads the low 10 bits of v to every third bit.
func expandBits(v uint32) uint32 {
	v = (v * 0x00010001) & 0xFF0000FF
	v = (v * 0x00000101) & 0x0F00F00F
	v = (v * 0x00000011) & 0xC30C30C3
	v = (v * 0x00000005) & 0x49249249
	return v
}

// mortonQuantize maps centroid coordinate x of an axis with bounds [mn, mx]
// to 0..1023.
func mortonQuantize(x, mn, mx float32) uint32 {
	ext := float32(mx - mn)
	var u float32 = 0.5
	if ext > 0 {
		u = float32(float32(x-mn) / ext)
	}
	if !(u >= 0) {
		u = 0
	}
	if u > 1 {
		u = 1
	}
	return uint32(math.Floor(float64(float32(u * 1023))))
}

// mortonCode is the 30-bit Morton code of a face box's centroid.
func mortonCode(b [6]float32, bmin, bmax [3]float32) uint32 {
	x := expandBits(mortonQuantize(centroid(&b, 0), bmin[0], bmax[0]))
	y := expandBits(mortonQuantize(centroid(&b, 1), bmin[1], bmax[1]))
	z := expandBits(mortonQuantize(centroid(&b, 2), bmin[2], bmax[2]))
	return x<<2 | y<<1 | z
}

// RadixBits and RadixPasses describe the device sort: 8-bit digits, four
// passes over the 30-bit codes (the last pass sees 6 bits).
const (
	RadixBits   = 8
	RadixPasses = 4
)

// radixSortPairs sorts keys ascending, carrying vals, stably: a least
// significant digit radix sort, the host image of the device passes.
func radixSortPairs(keys []uint32, vals []int32) {
	n := len(keys)
	k2 := make([]uint32, n)
	v2 := make([]int32, n)
	for pass := range RadixPasses {
		shift := uint(pass * RadixBits)
		var count [1 << RadixBits]int
		for _, k := range keys {
			count[(k>>shift)&(1<<RadixBits-1)]++
		}
		sum := 0
		for d := range count {
			count[d], sum = sum, sum+count[d]
		}
		for i, k := range keys {
			d := (k >> shift) & (1<<RadixBits - 1)
			k2[count[d]], v2[count[d]] = k, vals[i]
			count[d]++
		}
		copy(keys, k2)
		copy(vals, v2)
	}
}
