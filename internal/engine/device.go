package engine

import "github.com/rayd-go/rayd/launch"

// DeviceRays is a device-resident ray batch (segments for VisibleInto:
// Origins are the starts, Directions the ends). TMax and Active may be nil.
type DeviceRays struct {
	Origins, Directions, TMax *launch.Buffer[float32]
	Active                    *launch.Buffer[uint8]
	N                         int
}

// DeviceHits is a device intersection record; fields the flags do not
// select are nil.
type DeviceHits struct {
	T, P, Normal, GeoN, UV, Bary               *launch.Buffer[float32]
	ShapeID, PrimID, LocalPrimID, GlobalPrimID *launch.Buffer[int32]
}

// DeviceReflections is a device trace_reflections record (Images may be
// nil).
type DeviceReflections struct {
	Valid   *launch.Buffer[uint8]
	T       *launch.Buffer[float32]
	PrimIDs *launch.Buffer[int32]
	Images  *launch.Buffer[float32]
}

// DeviceTape is the forward winner of the intersect VJP on the device.
type DeviceTape struct {
	Prim *launch.Buffer[int32]
	UV   *launch.Buffer[float32]
}

// DeviceCotangents are device upstream gradients (nil: zero).
type DeviceCotangents struct {
	T, P, N, GeoN, UV, Bary *launch.Buffer[float32]
}

// DeviceGrads receives device gradients (nil: not computed).
type DeviceGrads struct {
	Vertices, Origins, Directions *launch.Buffer[float32]
}
