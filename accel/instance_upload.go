package accel

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/launch"
)

// UpdateTimes is the host side of an InstanceLayer's last update.
type UpdateTimes struct {
	// Wait is the time spent waiting for the previous update's copy to
	// finish reading the staging memory (zero when it already had).
	Wait time.Duration
	// Host is the host work: packing the instance records into the staging
	// memory and computing the top level's slab scale, plus, when the top
	// level is built on the host (DeviceBuild false), building it and its
	// leaf order there.
	Host time.Duration
	// Queue is the time to queue the one copy to the device and its event,
	// plus the build kernel when DeviceBuild.
	Queue time.Duration
	// DeviceBuild reports that the top level was built on the device (at
	// most TLASDeviceMax instances): its time is the device's, after the
	// copy, and not part of the host times above.
	DeviceBuild bool
}

// LastUpdate returns the host-side times of the layer's last update.
func (l *InstanceLayer) LastUpdate() UpdateTimes { return l.stage.times }

// instanceStage is an instance layer's per-update data in one device
// buffer, whose views are the kernels' arguments: the top-level nodes, the
// instance records and the leaf order. Up to TLASDeviceMax instances the
// host writes only the records into one page-locked staging buffer, one
// asynchronous copy moves them and one kernel builds the top level from
// them (rayd_tlas_build, with the object boxes uploaded once); above, the
// host builds the top level and the copy moves all three. The shape of the
// top level depends on the instance count alone, so the sizes are fixed by
// the first update (stageLayout).
type instanceStage struct {
	host   *launch.Pinned[uint32]
	dev    *launch.Buffer[uint32]
	copied *launch.Event // recorded after the last copy; pending until waited on
	// pending: a copy from host may still be running.
	pending bool
	lay     stageLayout
	nodes   *launch.Buffer[uint32]
	inst    *launch.Buffer[float32]
	order   *launch.Buffer[int32]
	target  *launch.Buffer[uint32] // where the staging words go
	build   tlasDeviceArgs         // the device build's buffers (lay.onDevice)

	tb       *tlasBuilder
	leaf     []int32 // the builder's order, copied into the staging words
	numNodes int
	times    UpdateTimes
}

// stageLayout places an update's data in the device buffer (offsets and
// lengths in 32-bit words):
//
//	[nodes, +NodeWords·nodes)             top-level nodes (64-byte aligned)
//	[recs, +InstanceRecordWords·n)        instance records (16-byte aligned)
//	[order, +n)                           leaf order
//	[cent, +tlasCentWords·n)              device build: centroids (8-byte aligned)
//	[box, +tlasBoxWords·n)                device build: rounded boxes
//
// The staging memory holds the records alone when the top level is built
// on the device (copied to recs), else nodes, records and order (copied to
// 0).
type stageLayout struct {
	n, numNodes           int
	onDevice              bool
	nodes, recs, order    int // offsets
	cent, box, total      int
	nodeWords, recWords   int // lengths
	stageFrom, stageWords int // the staging words' place in the device buffer
}

// newStageLayout is the layout of n instances, built where tlasOnDevice
// says.
func newStageLayout(n int) stageLayout { return stageLayoutFor(n, tlasOnDevice(n)) }

// stageLayoutFor is the layout of n instances whose top level is built on
// the device (onDevice, which needs tlasOnDevice(n)) or on the host.
func stageLayoutFor(n int, onDevice bool) stageLayout {
	l := stageLayout{n: n, numNodes: TLASNodeCount(n), onDevice: onDevice}
	l.nodeWords, l.recWords = NodeWords*l.numNodes, InstanceRecordWords*n
	l.recs = l.nodeWords
	l.order = l.recs + l.recWords
	l.total = l.order + n
	l.stageFrom, l.stageWords = 0, l.total
	if l.onDevice {
		l.cent = (l.total + 1) &^ 1
		l.box = l.cent + tlasCentWords*n
		l.total = l.box + tlasBoxWords*n
		l.stageFrom, l.stageWords = l.recs, l.recWords
	}
	return l
}

// alloc sizes the stage for n instances on s's device and, when the top
// level is built there, uploads the object boxes (lo, hi). On error nothing
// is left allocated.
func (st *instanceStage) alloc(s *launch.Stream, n int, lo, hi [][3]float64) (err error) {
	defer func() {
		if err != nil {
			err = errors.Join(err, st.close())
		}
	}()
	st.lay = newStageLayout(n)
	lay := &st.lay
	st.numNodes = lay.numNodes
	d := s.Device()
	if st.host, err = launch.AllocPinned[uint32](d, lay.stageWords); err != nil {
		return err
	}
	if st.dev, err = launch.AllocAsync[uint32](s, lay.total); err != nil {
		return err
	}
	if st.copied, err = d.NewEvent(false); err != nil {
		return err
	}
	if st.nodes, err = st.dev.View(lay.nodes, lay.nodeWords); err != nil {
		return err
	}
	if st.inst, err = launch.ViewAs[float32](st.dev, lay.recs, lay.recWords); err != nil {
		return err
	}
	if st.order, err = launch.ViewAs[int32](st.dev, lay.order, n); err != nil {
		return err
	}
	if st.target, err = st.dev.View(lay.stageFrom, lay.stageWords); err != nil {
		return err
	}
	st.leaf, st.tb = make([]int32, n), newTLASBuilder()
	if !lay.onDevice {
		return nil
	}
	b := &st.build
	b.inst, b.nodes, b.order = st.inst, st.nodes, st.order
	if b.cent, err = launch.ViewAs[float64](st.dev, lay.cent/2, 3*n); err != nil {
		return err
	}
	if b.box, err = st.dev.View(lay.box, tlasBoxWords*n); err != nil {
		return err
	}
	b.objs, err = upload(s, d, objectBoxData(lo, hi))
	return err
}

// upload writes x's update into the staging memory (once the previous
// copy has read it), queues its copy to the device on s and, up to
// TLASDeviceMax instances, the top level's build there. It returns the top
// level's slab scale.
func (st *instanceStage) upload(s *launch.Stream, x *geom.Instances, lo, hi [][3]float64) (float32, error) {
	n := x.Len()
	if st.dev == nil {
		if err := st.alloc(s, n, lo, hi); err != nil {
			return 0, err
		}
	} else if n != len(st.leaf) {
		return 0, fmt.Errorf("accel: %d instances, the layer was built for %d", n, len(st.leaf))
	}
	t0 := time.Now()
	if st.pending {
		if err := st.copied.Synchronize(); err != nil {
			return 0, err
		}
		st.pending = false
	}
	t1 := time.Now()
	scale := st.fill(st.host.Slice(), x, lo, hi)
	t2 := time.Now()
	if err := st.target.UploadPinned(s, st.host); err != nil {
		return 0, err
	}
	// From here on a copy may be reading the staging memory: until the
	// event is recorded, only a full wait makes it writable again.
	if err := st.copied.Record(s); err != nil {
		return 0, errors.Join(err, s.Synchronize())
	}
	st.pending = true
	if st.lay.onDevice {
		if err := launchTLASBuild(streamRunner{s}, st.build, n); err != nil {
			return 0, err
		}
	}
	st.times = UpdateTimes{Wait: t1.Sub(t0), Host: t2.Sub(t1), Queue: time.Since(t2), DeviceBuild: st.lay.onDevice}
	return scale, nil
}

// fill writes the stage's staging words for x into w (stageLayout) and
// returns the top level's slab scale.
func (st *instanceStage) fill(w []uint32, x *geom.Instances, lo, hi [][3]float64) float32 {
	lay := &st.lay
	if lay.onDevice {
		packInstanceRecords(w[:lay.recWords], x)
		return tlasScale(x)
	}
	scale, _ := st.tb.build(x, lo, hi, w[:lay.nodeWords], st.leaf)
	packInstanceRecords(w[lay.recs:lay.recs+lay.recWords], x)
	for i, id := range st.leaf {
		w[lay.order+i] = uint32(id)
	}
	return scale
}

// close releases the stage, after any copy still reading the staging
// memory has completed. Idempotent.
func (st *instanceStage) close() error {
	// A device closed first has freed the memory and the event with its
	// context: ErrClosed from the event is no failure here.
	live := func(err error) error {
		if errors.Is(err, launch.ErrClosed) {
			return nil
		}
		return err
	}
	var errs []error
	if st.pending {
		errs = append(errs, live(st.copied.Synchronize()))
		st.pending = false
	}
	errs = append(errs, st.dev.Close(), st.host.Close(), st.build.objs.Close())
	if st.copied != nil {
		errs = append(errs, live(st.copied.Close()))
	}
	st.host, st.dev, st.copied, st.nodes, st.inst, st.order, st.target = nil, nil, nil, nil, nil, nil, nil
	st.build = tlasDeviceArgs{}
	return errors.Join(errs...)
}

// packInstanceRecords writes x's device records (InstanceRecords' words,
// as bits) into dst.
func packInstanceRecords(dst []uint32, x *geom.Instances) {
	for i := range x.Records {
		r := &x.Records[i]
		w := dst[InstanceRecordWords*i : InstanceRecordWords*(i+1)]
		for k, v := range r.Transform {
			w[k] = math.Float32bits(v)
		}
		for k, v := range r.Inverse {
			w[12+k] = math.Float32bits(v)
		}
		w[21], w[22], w[23] = uint32(r.Geometry), uint32(r.Mask), 0
	}
}
