package replica

import (
	"errors"

	"github.com/rayd-go/rayd/launch"
)

// PoisonLanes fills the resident RF buffers of r (its partial, folded
// output, mirror and host staging) with 0xff bytes, NaN as float64 and
// float32 and −1 as counters, so that a test sees every value a call fails
// to write. It waits for r's compute stream.
func PoisonLanes(r *Replica) error {
	st := r.lanes()
	st.claim.Lock()
	defer st.claim.Unlock()
	s := r.compute
	errs := []error{poison(s, st.part.Acc), poison(s, st.part.Ints), poison(s, st.out)}
	for i := range st.host {
		st.host[i] = 0xffffffff
	}
	return errors.Join(append(errs, s.Synchronize())...)
}

// LaneBytes is the size of r's resident RF device buffers, 0 before its
// first resident call.
func LaneBytes(r *Replica) int64 {
	st := r.lanes()
	st.claim.Lock()
	defer st.claim.Unlock()
	return nbytes(st.part.Acc) + nbytes(st.part.Ints) + nbytes(st.out) + nbytes(st.states) + nbytes(st.material) +
		nbytes(st.rows) + nbytes(st.active) + nbytes(st.mirror.Acc) + nbytes(st.mirror.Ints)
}

// CloseLanes frees r's resident RF state (what Replica.Close is to do).
func CloseLanes(r *Replica) error { return r.closeLanes() }

func poison[T launch.Elem](s *launch.Stream, b *launch.Buffer[T]) error {
	if b == nil {
		return nil
	}
	return b.Memset8(s, 0xff)
}
