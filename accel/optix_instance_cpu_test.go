package accel

import (
	"context"
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/testscene"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ptx"
	cudasrc "github.com/rayd-go/rayd/ptx/src"
	"github.com/rayd-go/rayd/ref"
)

// TestOptiXInstanceParamsLayoutMatchesSource: every field of the instance
// module's Params sits at the byte offset the Go packer writes.
func TestOptiXInstanceParamsLayoutMatchesSource(t *testing.T) {
	b, err := cudasrc.Read("optix_instance.cu")
	require.NoError(t, err)
	src := string(b)
	body := src[strings.Index(src, "struct Params {"):]
	body = body[:strings.Index(body, "};")]
	re := regexp.MustCompile(`(?m)^\s*([\w ]+?)\s*(\*?)\s*(\w+);\s*//\s*@(\d+)`)
	goOff := map[string]int{
		"handle": oiHandle, "o": oiO, "d": oiD, "tmax": oiTMax, "active": oiActive, "tmin": oiTMin,
		"ray_mask": oiRayMask, "geo_mask": oiGeoMask, "inst": oiInst, "geo_ptrs": oiGeoPtrs, "geo_first": oiGeoFirst,
		"out_t": oiOutT, "out_p": oiOutP, "out_n": oiOutN, "out_geo_n": oiOutGeoN, "out_uv": oiOutUV,
		"out_bary": oiOutBary, "out_shape": oiOutShape, "out_prim": oiOutPrim, "out_local": oiOutLocal,
		"out_global": oiOutGlobal, "out_inst": oiOutInst, "n": oiN, "flags": oiFlags, "pad": oiFlags + 4,
	}
	next, seen := 0, 0
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		size := 4
		if m[2] == "*" || strings.Contains(m[1], "long long") {
			size = 8
		}
		off, _ := strconv.Atoi(m[4])
		next = (next + size - 1) / size * size
		assert.Equal(t, next, off, "Params.%s: the @ comment against the C layout", m[3])
		want, ok := goOff[m[3]]
		assert.True(t, ok && want == off, "Params.%s @%d: Go packer offset %d (known %v)", m[3], off, want, ok)
		next += size
		seen++
	}
	assert.Equal(t, len(goOff), seen, "parsed fields")
	assert.Equal(t, oiParamsBytes, next, "Params size")
	for _, spec := range optixInstSpecs {
		for _, e := range specEntries(spec) {
			assert.Contains(t, src, "__global__ void "+e+"()", "%s: entry %s", spec.Raygen, e)
		}
	}
	mod, err := ptx.Load(ModuleOptiXInstance)
	require.NoError(t, err)
	assert.Equal(t, ptx.LoaderOptiX, mod.Record.Loader)
	assert.Contains(t, string(mod.Image), ".b8 params["+strconv.Itoa(oiParamsBytes)+"];")
	for _, spec := range optixInstSpecs {
		for _, e := range specEntries(spec) {
			_, ok := mod.Record.Entry(e)
			assert.True(t, ok, "PTX lacks entry %s", e)
		}
	}
	tgt, _ := strconv.Atoi(strings.TrimPrefix(mod.Record.Target, "sm_"))
	assert.Less(t, tgt, 90, "OptiX modules must be compiled for compute_75..89")
}

// TestOptiXInstanceSpecs: the three instance pipelines share one module
// compiled for single-level instancing, the limits and masked forms differ
// from the plain one only in the raygen (and the masked one's any-hit),
// and the mesh pipelines keep their single-GAS options.
func TestOptiXInstanceSpecs(t *testing.T) {
	plain, lim, masked := optixInstSpecs[instPlain], optixInstSpecs[instLimits], optixInstSpecs[instMasked]
	for _, s := range optixInstSpecs {
		assert.Equal(t, ModuleOptiXInstance, s.Module)
		assert.True(t, s.Options.Instancing)
		assert.Equal(t, plain.Miss, s.Miss)
		assert.Equal(t, plain.ClosestHit, s.ClosestHit)
	}
	assert.Equal(t, plain.Raygen+"_limits", lim.Raygen)
	assert.Equal(t, plain.Raygen+"_masked", masked.Raygen)
	assert.Empty(t, plain.AnyHit)
	assert.Empty(t, lim.AnyHit)
	assert.Equal(t, "__anyhit__mesh_mask", masked.AnyHit)
	for _, s := range allOptiXSpecs {
		assert.False(t, s.Options.Instancing, "mesh pipeline %s", s.Raygen)
	}
	var l OptiXInstanceLayer
	assert.ErrorIs(t, l.Update(nil, &geom.Instances{}), ErrClosedAccel)
	assert.Error(t, l.Intersect(nil, Rays{N: 1}, geom.FlagsAll, nil, Hits{}, nil), "missing ray buffers")
	assert.NoError(t, l.Close(), "closing a zero layer")
}

// TestOptiXInstancesOfTable: one IAS instance per instance, in id order,
// with the instance's transform, its index as id, its mask and its
// geometry's GAS.
func TestOptiXInstancesOfTable(t *testing.T) {
	tb := tables(t, gridMesh(2, 1), cloudMesh(10, 0.1, 3))
	x, err := geom.BuildInstances(tb, []geom.Instance{
		{Geometry: 1, Transform: testscene.Translation(1, 2, 3), Mask: geom.Mask(0x05)},
		{Geometry: 0, Transform: geom.Identity},
		{Geometry: 1, Transform: geom.Transform{2, 0, 0, -1, 0, 3, 0, 0.5, 0, 0, 4, 7}, Mask: geom.Mask(0)},
	})
	require.NoError(t, err)
	gas := []*launch.GAS{new(launch.GAS), new(launch.GAS)}
	in := OptiXInstances(x, gas)
	require.Len(t, in, 3)
	for i, r := range x.Records {
		assert.Same(t, gas[r.Geometry], in[i].GAS, "instance %d places its geometry's GAS", i)
		assert.Equal(t, [12]float32(r.Transform), in[i].Transform)
		assert.Equal(t, uint32(i), in[i].ID)
		assert.Equal(t, r.Mask, in[i].Mask)
	}
	assert.Equal(t, []uint8{0x05, 0xFF, 0x00}, []uint8{in[0].Mask, in[1].Mask, in[2].Mask})
	assert.Equal(t, []uint8{0xFF, 0xFF}, GeometryMasks(tb))
	require.NoError(t, tb.SetMask(1, 0x06))
	assert.Equal(t, []uint8{0xFF, 0x06}, GeometryMasks(tb))
}

// TestInstancedParityRuleOnReference exercises the instanced tie rule
// without a GPU: the reference's own record passes with no tie; a wrong
// instance, a dropped interior hit, a normal not derived by
// geom.WorldNormal and a hit on an instance the row may not see fail.
func TestInstancedParityRuleOnReference(t *testing.T) {
	r := testscene.Rand(t)
	meshes := []geom.Mesh{gridMesh(6, 2), cloudMesh(400, 0.1, 5), testscene.Sphere([3]float32{0, 0, 0}, 0.4, 10, 7)}
	tb := tables(t, meshes...)
	in := testscene.RandomInstances(r, len(meshes), 12, 1.5)
	x, err := geom.BuildInstances(tb, in)
	require.NoError(t, err)
	sc, err := ref.NewInstancedScene(context.Background(), tb, x)
	require.NoError(t, err)
	o, d := aimedAtInstances(r, tb, in, 2000)
	ip, err := newInstParity(tb, x)
	require.NoError(t, err)
	want, err := ip.reference(o, d, nil, nil)
	require.NoError(t, err)
	got, err := sc.Intersect(context.Background(), o, d, nil, nil, geom.FlagsAll)
	require.NoError(t, err)
	st, err := ip.checkHits(o, d, nil, nil, got, want)
	require.NoError(t, err)
	assert.Zero(t, st.Ties+st.EdgeCases, "the reference against itself")
	require.Greater(t, st.Hits, 1000, "aimed rays hit")

	interior := -1 // a hit well inside its face, on an instance whose face no other instance ties
	for i, w := range want {
		if w.hit && min(w.u, w.v, 1-w.u-w.v) > 0.2 {
			interior = i
			break
		}
	}
	require.GreaterOrEqual(t, interior, 0)
	bad := cloneHits(got)
	bad.InstanceID = append([]int32(nil), got.InstanceID...)
	bad.InstanceID[interior] = (bad.InstanceID[interior] + 1) % int32(x.Len())
	_, err = ip.checkHits(o, d, nil, nil, bad, want)
	assert.Error(t, err, "another instance")

	bad = cloneHits(got)
	bad.InstanceID = append([]int32(nil), got.InstanceID...)
	bad.SetMiss(interior)
	bad.InstanceID[interior] = -1
	_, err = ip.checkHits(o, d, nil, nil, bad, want)
	assert.Error(t, err, "a dropped interior hit")

	bad = cloneHits(got)
	bad.InstanceID = got.InstanceID
	bad.GeoN[3*interior] = math.Nextafter32(bad.GeoN[3*interior], 2)
	_, err = ip.checkHits(o, d, nil, nil, bad, want)
	assert.True(t, errors.Is(err, errRecord), "a normal one ulp off: %v", err)

	ip.mask = make([]uint8, len(want))
	for i := range ip.mask {
		ip.mask[i] = 0xFF
	}
	ip.mask[interior] = 0x02
	x.Records[want[interior].inst].Mask = 0x01
	_, err = ip.checkHits(o, d, nil, nil, got, want)
	assert.ErrorContains(t, err, "hit by a row of mask")

}
