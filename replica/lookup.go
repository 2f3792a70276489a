package replica

import "github.com/rayd-go/rayd/shard"

// Lookup returns the CUDA replica behind r when this Source built it: r
// itself, or the owner's replica behind a borrowed one (shard.Borrow), so
// that the layers over a Source's replicas reach a replica's device and
// acceleration structure through the Source instead of type assertions.
func (s *Source) Lookup(r shard.Replica) (*Replica, bool) {
	x, ok := shard.Unwrap(r).(*Replica)
	if !ok || x.src != s {
		return nil, false
	}
	return x, true
}
