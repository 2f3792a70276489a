package edge

// The float64 closest-pair arithmetic of the ray query and the box bound of
// its tree walk, exported for the host mirrors of the GPU edge kernels
// (package accel), which walk the device tree layout on the CPU and must
// compute every distance exactly as this package and the kernels do.

// RaySegment returns the closest pair between the query o + t·d,
// t ∈ [0, tmax] (tmax = +Inf: the half ray), and the segment a + s·(b − a),
// s ∈ [0, 1], as NearestRay computes it: t, s and the squared distance.
// Among equal candidates the first of spec §5.2's order wins.
func RaySegment(o, d [3]float64, tmax float64, a, b [3]float64) (t, s, d2 float64) {
	return raySegment(o, d, tmax, a, b)
}

// RayBoxBound returns the squared distance from the query o + t·d,
// t ∈ [0, T] (T = +Inf: the half ray; T ≤ 0: the point o), to the box
// [lo, hi]: the float64 lower bound with which an Index prunes a node.
func RayBoxBound(o, d [3]float64, T float64, lo, hi [3]float64) float64 {
	return rayBound(o, d, T, &node{lo: lo, hi: hi})
}

// PointBoxBound returns the squared distance from p to the box [lo, hi].
func PointBoxBound(p, lo, hi [3]float64) float64 {
	return pointBound(p, &node{lo: lo, hi: hi})
}
