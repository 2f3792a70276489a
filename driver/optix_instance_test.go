package driver

import (
	"encoding/binary"
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOptiXInstanceInputLayout(t *testing.T) {
	checkLayout(t, "OptixBuildInputInstanceArray", optixBuildInputInstanceArray{}, 16, 8, map[string]uintptr{
		"instances": 0, "numInstances": 8, "instanceStride": 12})
	checkLayout(t, "OptixBuildInput (instances)", optixInstanceInput{}, 1032, 8, map[string]uintptr{
		"typ": 0, "instanceArray": 8})
	in, unpin := newInstanceInput(OptiXInstances{Instances: 0x3000, NumInstances: 7})
	defer unpin()
	b := unsafe.Slice((*byte)(unsafe.Pointer(in)), unsafe.Sizeof(*in))
	assert.Equal(t, uint32(0x2143), binary.LittleEndian.Uint32(b[0:]), "type INSTANCES")
	assert.Equal(t, uint64(0x3000), binary.LittleEndian.Uint64(b[8:]), "instances")
	assert.Equal(t, uint32(7), binary.LittleEndian.Uint32(b[16:]), "numInstances")
	assert.Zero(t, binary.LittleEndian.Uint32(b[20:]), "instanceStride 0 = 80 bytes")
	for off := 24; off < len(b); off++ {
		require.Zero(t, b[off], "the rest of the union stays zero (byte %d)", off)
	}
}

func TestOptiXInstanceBytes(t *testing.T) {
	in := OptiXInstance{ID: 41, SBTOffset: 3, VisibilityMask: 0x5a, Flags: OptiXInstanceFlagDisableAnyHit,
		Traversable: 0x1122334455667788}
	for k := range in.Transform {
		in.Transform[k] = float32(k) + 0.5
	}
	b := in.Bytes()
	for k := range 12 {
		assert.Equal(t, float32(k)+0.5, math.Float32frombits(binary.LittleEndian.Uint32(b[4*k:])), "transform[%d] @%d", k, 4*k)
	}
	assert.Equal(t, uint32(41), binary.LittleEndian.Uint32(b[48:]), "instanceId @48")
	assert.Equal(t, uint32(3), binary.LittleEndian.Uint32(b[52:]), "sbtOffset @52")
	assert.Equal(t, uint32(0x5a), binary.LittleEndian.Uint32(b[56:]), "visibilityMask @56")
	assert.Equal(t, uint32(4), binary.LittleEndian.Uint32(b[60:]), "flags @60")
	assert.Equal(t, uint64(0x1122334455667788), binary.LittleEndian.Uint64(b[64:]), "traversableHandle @64")
	assert.Equal(t, make([]byte, 8), b[72:80], "pad[2] @72 zero")
}

func TestOptiXInstanceInputChecks(t *testing.T) {
	var c OptiXContext
	for _, x := range []OptiXInstances{{Instances: 0x1000}, {NumInstances: 1}, {Instances: 0x1008, NumInstances: 1}} {
		_, err := c.AccelMemoryUsageInstances(OptiXAccelOptions{}, x)
		assert.Error(t, err, "%+v", x)
		_, err = c.AccelBuildInstances(Stream{}, OptiXAccelOptions{}, x, 0, 0, 0, 0)
		assert.Error(t, err, "%+v", x)
	}
}
