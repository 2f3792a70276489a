package launch

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/driver"
)

// TestPackInstances: each IAS instance becomes one 80-byte OptixInstance
// (transform, instanceId, sbtOffset 0, visibilityMask, flags 0, the GAS's
// handle), in order; a nil, closed or foreign GAS is refused.
func TestPackInstances(t *testing.T) {
	c, other := &OptiXContext{ordinal: 0}, &OptiXContext{ordinal: 1}
	g1 := &GAS{ctx: c, handle: 0x1111222233334444}
	g2 := &GAS{ctx: c, handle: 0x5555}
	in := []IASInstance{{GAS: g2, ID: 0, Mask: 0xFF}, {GAS: g1, ID: 1, Mask: 0x05}}
	for k := range 12 {
		in[1].Transform[k] = float32(k) - 3.25
	}
	b, err := packInstances(c, in)
	require.NoError(t, err)
	require.Len(t, b, 2*driver.OptiXInstanceBytes)
	for i, x := range in {
		w := b[driver.OptiXInstanceBytes*i : driver.OptiXInstanceBytes*(i+1)]
		for k := range 12 {
			assert.Equal(t, x.Transform[k], math.Float32frombits(binary.LittleEndian.Uint32(w[4*k:])))
		}
		assert.Equal(t, x.ID, binary.LittleEndian.Uint32(w[48:]), "instanceId")
		assert.Zero(t, binary.LittleEndian.Uint32(w[52:]), "sbtOffset")
		assert.Equal(t, uint32(x.Mask), binary.LittleEndian.Uint32(w[56:]), "visibilityMask")
		assert.Zero(t, binary.LittleEndian.Uint32(w[60:]), "flags")
		assert.Equal(t, uint64(x.GAS.handle), binary.LittleEndian.Uint64(w[64:]), "traversableHandle")
		assert.Zero(t, binary.LittleEndian.Uint64(w[72:]), "padding")
	}
	for name, bad := range map[string][]IASInstance{
		"none":       nil,
		"nil GAS":    {{ID: 0}},
		"closed GAS": {{GAS: &GAS{ctx: c}}},
		"foreign":    {{GAS: &GAS{ctx: other, handle: 1}}},
	} {
		_, err := packInstances(c, bad)
		assert.Error(t, err, name)
	}
	var a IAS
	assert.ErrorIs(t, a.Rebuild(&Stream{}, in), ErrClosed)
	assert.NoError(t, a.Close())
	assert.Zero(t, a.Bytes())
}
