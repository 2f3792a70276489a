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
	// Build is the time to build the top level and write it, the order and
	// the instance records into the staging memory.
	Build time.Duration
	// Queue is the time to queue the one copy to the device and its event.
	Queue time.Duration
}

// LastUpdate returns the host-side times of the layer's last update.
func (l *InstanceLayer) LastUpdate() UpdateTimes { return l.stage.times }

// instanceStage is an instance layer's per-update data in one piece: the
// top-level nodes, the instance records and the leaf order, written on the
// host into one page-locked staging buffer and uploaded by one
// asynchronous copy into one device buffer, whose views are the kernels'
// arguments. The shape of the top level depends on the instance count
// alone, so the sizes are fixed by the first update.
//
//	words [0, NodeWords·nodes)                 top-level nodes (64-byte aligned)
//	      [NodeWords·nodes, +InstanceRecordWords·n)  instance records (16-byte aligned)
//	      [.., +n)                             leaf order
type instanceStage struct {
	host   *launch.Pinned[uint32]
	dev    *launch.Buffer[uint32]
	copied *launch.Event // recorded after the last copy; pending until waited on
	// pending: a copy from host may still be running.
	pending bool
	nodes   *launch.Buffer[uint32]
	inst    *launch.Buffer[float32]
	order   *launch.Buffer[int32]

	tb       *tlasBuilder
	leaf     []int32 // the builder's order, copied into the staging words
	numNodes int
	times    UpdateTimes
}

// alloc sizes the stage for n instances on s's device. On error nothing is
// left allocated.
func (st *instanceStage) alloc(s *launch.Stream, n int) (err error) {
	defer func() {
		if err != nil {
			err = errors.Join(err, st.close())
		}
	}()
	st.numNodes = TLASNodeCount(n)
	nodeWords, recWords := NodeWords*st.numNodes, InstanceRecordWords*n
	total := nodeWords + recWords + n
	d := s.Device()
	if st.host, err = launch.AllocPinned[uint32](d, total); err != nil {
		return err
	}
	if st.dev, err = launch.AllocAsync[uint32](s, total); err != nil {
		return err
	}
	if st.copied, err = d.NewEvent(false); err != nil {
		return err
	}
	if st.nodes, err = st.dev.View(0, nodeWords); err != nil {
		return err
	}
	if st.inst, err = launch.ViewAs[float32](st.dev, nodeWords, recWords); err != nil {
		return err
	}
	if st.order, err = launch.ViewAs[int32](st.dev, nodeWords+recWords, n); err != nil {
		return err
	}
	st.leaf, st.tb = make([]int32, n), newTLASBuilder()
	return nil
}

// upload builds the top level over x into the staging memory (once the
// previous copy has read it) and queues its copy to the device on s. It
// returns the top level's slab scale.
func (st *instanceStage) upload(s *launch.Stream, x *geom.Instances, lo, hi [][3]float64) (float32, error) {
	n := x.Len()
	if st.dev == nil {
		if err := st.alloc(s, n); err != nil {
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
	if err := st.dev.UploadPinned(s, st.host); err != nil {
		return 0, err
	}
	// From here on a copy may be reading the staging memory: until the
	// event is recorded, only a full wait makes it writable again.
	if err := st.copied.Record(s); err != nil {
		return 0, errors.Join(err, s.Synchronize())
	}
	st.pending = true
	st.times = UpdateTimes{Wait: t1.Sub(t0), Build: t2.Sub(t1), Queue: time.Since(t2)}
	return scale, nil
}

// fill writes the stage's words for x into w and returns the top level's
// slab scale.
func (st *instanceStage) fill(w []uint32, x *geom.Instances, lo, hi [][3]float64) float32 {
	nodeWords, recWords := NodeWords*st.numNodes, InstanceRecordWords*x.Len()
	scale, _ := st.tb.build(x, lo, hi, w[:nodeWords], st.leaf)
	packInstanceRecords(w[nodeWords:nodeWords+recWords], x)
	for i, id := range st.leaf {
		w[nodeWords+recWords+i] = uint32(id)
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
	errs = append(errs, st.dev.Close(), st.host.Close())
	if st.copied != nil {
		errs = append(errs, live(st.copied.Close()))
	}
	st.host, st.dev, st.copied, st.nodes, st.inst, st.order = nil, nil, nil, nil, nil, nil
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
