package rayd

import (
	"io"

	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/replica"
	"github.com/rayd-go/rayd/shard"
)

// cudaSource serves a replicated scene from this machine's CUDA devices.
// Each scene owns its Source (devices stay open until the scene closes).
type cudaSource struct {
	src  *replica.Source
	opts replica.Options
}

func (c *cudaSource) Topology() shard.Topology { return c.src.Topology() }

func (c *cudaSource) Builder(master int, meshes []Mesh) shard.Builder {
	return c.src.BuilderWith(master, meshes, c.opts)
}

// Close closes the devices the source opened.
func (c *cudaSource) Close() error { return c.src.Close() }

var _ io.Closer = (*cudaSource)(nil)

// masterDevice is the opened device of the master on a CUDA source (the one
// the layer's replicas use), or nil on any other source.
func masterDevice(src ReplicaSource, master int) *launch.Device {
	c, ok := src.(*cudaSource)
	if !ok {
		return nil
	}
	d, err := c.src.Device(master)
	if err != nil {
		return nil
	}
	return d
}

func init() {
	cudaReplicaSource = func(o shard.Options) (ReplicaSource, error) {
		opts := replica.Options{SkipWarmUp: o.SkipWarmUp, AllowNoPeerAccess: o.AllowNoPeerAccess}
		return &cudaSource{src: replica.NewSource(opts), opts: opts}, nil
	}
}
