package replica

import (
	"fmt"

	"github.com/rayd-go/rayd/shard"
)

// Route implements shard.Router for a remote: a device task (its inputs
// and outputs are buffers of the master) runs peer-direct when the remote
// can address the master's memory, that is when it lives on the master's
// own device or peer access is enabled between the two (Source.Build
// enables it, and grants the remote access to the master's memory pool);
// host tasks, and every task under shard.TransferCopy, take the copy path.
// A device intersect that writes more than t goes compact instead where
// that is asked for or, by default, for a remote on another device
// (compactRoute).
func (r *Replica) Route(t shard.Task, want shard.Transfer) shard.Path {
	if r.isMaster || want == shard.TransferCopy || !r.direct {
		return shard.PathCopy
	}
	switch t := t.(type) {
	case *DeviceIntersect:
		return r.compactRoute(t, want)
	case *DeviceReflections, *DeviceVisible:
		return shard.PathPeerDirect
	}
	return shard.PathCopy
}

// ScatterDirect implements shard.Router: the chunk's inputs are views of
// the caller's rows on the master, read in place by this remote's launch,
// which waits on the caller's stream.
func (r *Replica) ScatterDirect(t shard.Task, lo, hi int, path shard.Path) (shard.Payload, shard.Event, error) {
	if err := r.live(); err != nil {
		return nil, nil, err
	}
	if !path.Direct() || r.Route(t, shard.Transfer(path)) != path {
		return nil, nil, fmt.Errorf("replica: cuda:%d cannot take the %s path for %T: %w", r.Device(), path, t, shard.ErrUnsupported)
	}
	j, err := jobOf(t)
	if err != nil {
		return nil, nil, err
	}
	if lo < 0 || hi < lo {
		return nil, nil, fmt.Errorf("replica: scatter of rows [%d,%d)", lo, hi)
	}
	src, caller, err := r.callerRows(j, lo, hi)
	if err != nil {
		return nil, nil, err
	}
	return &payload{rep: r, dev: r.dev.d, cols: src, lo: lo, hi: hi, path: path}, caller, nil
}
