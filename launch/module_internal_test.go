package launch

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/ptx"
)

func TestForcedJITFollowsTheEnvironment(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "false": false, " FALSE ": false,
		"1": true, "true": true, "T": true, "yes": true, "on": true} {
		assert.Equal(t, want, forcedJIT(func(k string) string {
			require.Equal(t, EnvPTXJIT, k)
			return v
		}), "%s=%q", EnvPTXJIT, v)
	}
	t.Setenv(EnvPTXJIT, "1")
	assert.True(t, PTXJITForced())
	t.Setenv(EnvPTXJIT, "0")
	assert.False(t, PTXJITForced())
}

// record is a CUDA module whose PTX targets sm_90 with cubins for archs.
func record(archs ...string) *ptx.ModuleRecord {
	rec := &ptx.ModuleRecord{Name: "trace", Loader: ptx.LoaderCUDA, Target: "sm_90", Cubins: []ptx.CubinRecord{}}
	for _, a := range archs {
		rec.Cubins = append(rec.Cubins, ptx.CubinRecord{Arch: a})
	}
	return rec
}

func TestChooseImage(t *testing.T) {
	all := record("sm_80", "sm_86", "sm_89", "sm_90")
	for _, tc := range []struct {
		name     string
		rec      *ptx.ModuleRecord
		dev      int
		force    bool
		want     imageChoice
		noImage  bool
		inReason string
	}{
		{name: "H100/H200 takes its cubin", rec: all, dev: 90, want: imageChoice{cubin: true, arch: "sm_90"}},
		{name: "A100 takes its cubin", rec: all, dev: 80, want: imageChoice{cubin: true, arch: "sm_80"}},
		{name: "an exact match only", rec: record("sm_80"), dev: 86, noImage: true, inReason: "no cubin for sm_86 (cubins: sm_80)"},
		{name: "forced JIT", rec: all, dev: 90, force: true, want: imageChoice{arch: "sm_90", reason: EnvPTXJIT + " forces the PTX"}},
		{name: "a newer device JITs the PTX", rec: all, dev: 100, want: imageChoice{arch: "sm_90", reason: "no cubin for sm_100 (cubins: sm_80, sm_86, sm_89, sm_90)"}},
		{name: "no cubins at all", rec: record(), dev: 90, want: imageChoice{arch: "sm_90", reason: "no cubins embedded"}},
		{name: "forced JIT on an older device", rec: all, dev: 86, force: true, noImage: true, inReason: "forces the PTX, and its PTX targets sm_90"},
		{name: "no cubins on an older device", rec: record(), dev: 80, noImage: true, inReason: "no cubins embedded, and its PTX targets sm_90"},
		{name: "an OptiX module", rec: &ptx.ModuleRecord{Name: "optix_trace", Loader: ptx.LoaderOptiX, Target: "sm_86"}, dev: 90,
			noImage: true, inReason: "OptiX program"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := chooseImage(tc.rec, tc.dev, tc.force)
			if tc.noImage {
				require.ErrorIs(t, err, ErrNoImage)
				assert.Contains(t, err.Error(), tc.inReason)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	// An architecture-specific PTX target JITs on that architecture only.
	specific := record()
	specific.Target = "sm_90a"
	_, err := chooseImage(specific, 90, false)
	assert.NoError(t, err)
	_, err = chooseImage(specific, 100, false)
	assert.ErrorIs(t, err, ErrNoImage)
}

// Every module of the embedded manifest has an image for an H200 (sm_90):
// its cubin where one is embedded, else its PTX; the OptiX module none.
func TestEveryEmbeddedModuleLoadsOnSM90(t *testing.T) {
	m, err := ptx.EmbeddedManifest()
	require.NoError(t, err)
	for i := range m.Modules {
		rec := &m.Modules[i]
		got, err := chooseImage(rec, 90, false)
		if rec.Loader == ptx.LoaderOptiX {
			assert.ErrorIs(t, err, ErrNoImage, rec.Name)
			continue
		}
		require.NoError(t, err, rec.Name)
		_, hasCubin := rec.Cubin("sm_90")
		assert.Equal(t, hasCubin, got.cubin, rec.Name)
	}
}

func TestModuleLoadLogKeepsTheLatest(t *testing.T) {
	before := ModuleLoadSeq()
	for i := range moduleLogSize + 3 {
		recordLoad(&ModuleLoad{Module: "m", Ordinal: i})
	}
	assert.Equal(t, before+moduleLogSize+3, ModuleLoadSeq())
	got := ModuleLoadsSince(before)
	require.Len(t, got, moduleLogSize)
	assert.Equal(t, 3, got[0].Ordinal, "the oldest three were dropped")
	assert.Equal(t, before+4, got[0].Seq)
	assert.Empty(t, ModuleLoadsSince(ModuleLoadSeq()))
	last := ModuleLoadsSince(ModuleLoadSeq() - 2)
	require.Len(t, last, 2)
	assert.Less(t, last[0].Seq, last[1].Seq)
}
