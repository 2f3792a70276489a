package accel

import (
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/launch"
)

// shrinkWide replaces the worst-case node buffer of a Width 8 build
// (n−1 nodes: the collapse's count is known only once the build status is
// read) by one of exactly NumNodes nodes, and waits for the copy so that
// the BVH is ready for every stream when BuildGeometry returns.
func (b *BVH) shrinkWide(s *launch.Stream) error {
	want := b.numNodes * WideNodeWords
	switch {
	case b.numNodes < 1 || want > b.nodes.Len():
		return fmt.Errorf("accel: wide collapse reported %d nodes, room for %d", b.numNodes, b.nodes.Len()/WideNodeWords)
	case want == b.nodes.Len():
		return nil
	}
	src, err := b.nodes.View(0, want)
	if err != nil {
		return err
	}
	nb, err := launch.AllocAsync[uint32](s, want)
	if err != nil {
		return err
	}
	if err := nb.CopyFrom(s, src); err != nil {
		return errors.Join(err, nb.Close())
	}
	old := b.nodes
	b.nodes = nb
	if err := old.CloseOn(s); err != nil {
		return err
	}
	return s.Synchronize()
}
