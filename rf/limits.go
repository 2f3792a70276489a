package rf

import "github.com/rayd-go/rayd/geom"

// Host sizes of the results, per grid cell, wedge event or path row: the
// operations check the result against geom.HostMemoryLimit() before they
// allocate it, and a device implementation multiplies them by its own
// count to check its buffers.
const (
	// AccumCellBytes is one cell of an AccumResult or a ReflResult: seven
	// float64 grids.
	AccumCellBytes = 7 * 8
	// CoherentCellBytes is one cell of a CoherentResult: twelve float64
	// field grids and four int32 counters.
	CoherentCellBytes = 12*8 + 4*4
	// WedgeEventBytes is one slot of WedgeEvents: three int32 ids, five
	// float64 vectors and the float64 source power.
	WedgeEventBytes = 3*4 + 5*3*8 + 8
	// PathRowBytes is one row of DfrPaths: the valid flag, six int32 ids,
	// seven float64 scalars and three float64 points.
	PathRowBytes = 1 + 6*4 + 7*8 + 3*3*8
)

// checkResult refuses a result of the product of counts bytes that does
// not fit in geom.HostMemoryLimit(): a *geom.AllocationError naming the
// operation and the buffer (errors.Is geom.ErrTooLarge).
func checkResult(op, what string, counts ...int) error {
	_, err := geom.CheckAlloc(op+" "+what, geom.HostMemoryLimit(), counts...)
	return err
}
