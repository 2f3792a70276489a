package launch

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rayd-go/rayd/driver"
)

// TestOptiXModuleOptionsInstancing: the mesh pipelines keep the single-GAS
// graph (depth 1); Instancing switches to single-level instancing (depth 2)
// and nothing else, and the two never share a memoised pipeline.
func TestOptiXModuleOptionsInstancing(t *testing.T) {
	mesh := OptiXModuleOptions{PayloadValues: 4, AttributeValues: 2, ParamsName: "params"}
	inst := mesh
	inst.Instancing = true
	assert.Equal(t, driver.OptiXGraphAllowSingleGAS, mesh.compile().TraversableGraph)
	assert.Equal(t, uint32(1), mesh.graphDepth())
	assert.Equal(t, driver.OptiXGraphAllowSingleLevelInstancing, inst.compile().TraversableGraph)
	assert.Equal(t, uint32(2), inst.graphDepth())
	mc, ic := mesh.compile(), inst.compile()
	ic.TraversableGraph = mc.TraversableGraph
	assert.Equal(t, mc, ic, "Instancing changes only the traversable graph")
	a := OptiXPipelineSpec{Module: "m", Options: mesh, Raygen: "r", Miss: "m", ClosestHit: "c"}
	b := a
	b.Options = inst
	assert.NotEqual(t, a.key(), b.key())
}
