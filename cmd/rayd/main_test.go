package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/gputest"
)

func TestInfoWithoutDriverFailsClearly(t *testing.T) {
	stdout, stderr, code := runWithoutDriver(t, "info")
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "libcuda: cannot load (set RAYD_LIBCUDA to its path)")
	assert.Contains(t, stderr, "/nonexistent/libcuda.so.1")
}

// `rayd info -json` prints JSON even when it fails: an error object.
func TestInfoJSONWithoutDriverIsAnErrorObject(t *testing.T) {
	stdout, stderr, code := runWithoutDriver(t, "info", "-json")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "libcuda: cannot load")
	var obj struct {
		Error string         `json:"error"`
		Code  string         `json:"code"`
		Build map[string]any `json:"build"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &obj), "stdout: %s", stdout)
	assert.Contains(t, obj.Error, "/nonexistent/libcuda.so.1")
	assert.Equal(t, "no_driver", obj.Code)
	assert.Contains(t, obj.Build, "commit")
}

func TestInfoOnGPU(t *testing.T) {
	ords := gputest.MustHaveDevices(t, 1)
	out, errb, code := runHere("info")
	assert.Equal(t, 0, code, errb)
	assert.Contains(t, out, "devices: ")
	assert.Contains(t, out, "cuda:0")
	if len(ords) > 1 {
		assert.Contains(t, out, "peer access")
	}
	out, errb, code = runHere("info", "-json")
	require.Equal(t, 0, code, errb)
	var rep infoReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep), "stdout is JSON only")
	assert.Len(t, rep.Devices, len(ords))
	assert.Len(t, rep.PeerAccess, len(ords))
	assert.Positive(t, rep.DriverVersion)
	t.Log("\n" + out)
}

func TestUsage(t *testing.T) {
	_, errb, code := runHere()
	assert.Equal(t, 2, code)
	assert.Contains(t, errb, "usage: rayd <command>")
	_, errb, code = runHere("frobnicate")
	assert.Equal(t, 2, code)
	assert.Contains(t, errb, `unknown command "frobnicate"`)
	for _, h := range []string{"help", "-h", "--help"} {
		out, _, code := runHere(h)
		assert.Equal(t, 0, code, h)
		for _, c := range commands() {
			assert.Contains(t, out, c.name+" ", h)
			assert.Contains(t, out, c.summary, h)
		}
	}
}

// Every command and subcommand describes itself with -h and exits 0.
func TestEveryCommandHelpExitsZero(t *testing.T) {
	cmds := [][]string{{"bench", "summarize"}, {"bench", "pin"}}
	for _, c := range commands() {
		cmds = append(cmds, []string{c.name})
		assert.NotEmpty(t, c.summary)
		assert.NotContains(t, c.summary, "\n", "one line")
	}
	for _, c := range cmds {
		for _, h := range []string{"-h", "-help", "--help"} {
			out, errb, code := runHere(append(c, h)...)
			assert.Equal(t, 0, code, "%v %s: %s", c, h, errb)
			help := out + errb // launch prints its help on stderr
			assert.Contains(t, help, "usage: rayd "+strings.Join(c, " "), "%v %s", c, h)
			assert.Contains(t, help, "-", "%v %s lists its flags", c, h)
		}
		_, _, code := runHere("help", c[0])
		assert.Equal(t, 0, code, "help %v", c)
	}
}

// Usage errors exit 2 everywhere, with the reason on stderr.
func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"info", "-bogus"}, {"info", "extra"},
		{"demo", "-config", "nope"}, {"demo", "-rays", "0"}, {"demo", "-backend", "vulkan"}, {"demo", "-rays", "x"},
		{"bench", "-config", "heavy"}, {"bench", "-devices", "0,x"}, {"bench", "-calibration-mode", "guess"},
		{"bench", "-repeat", "0"}, {"bench", "-rays", "-5"}, {"bench", "extra"},
		{"bench", "summarize"}, {"bench", "pin"}, {"bench", "summarize", "-nope"},
		{"calibrate", "-config", "heavy"}, {"calibrate", "-devices", "a,b"}, {"calibrate", "-mode", "guess"},
		{"calibrate", "-bounces", "100000"},
		{"version", "-x"}, {"version", "extra"},
	} {
		out, errb, code := runHere(args...)
		assert.Equal(t, 2, code, "%v", args)
		assert.NotEmpty(t, errb, "%v says why", args)
		assert.Empty(t, out, "%v writes nothing on stdout", args)
	}
}

func TestVersion(t *testing.T) {
	out, errb, code := runHere("version")
	require.Equal(t, 0, code, errb)
	for _, want := range []string{"rayd github.com/rayd-go/rayd", "commit  ", "dirty   ", "go      go1."} {
		assert.Contains(t, out, want)
	}
	out, errb, code = runHere("version", "-json")
	require.Equal(t, 0, code, errb)
	var v struct {
		Module, Commit, Source string
		GoVersion              string `json:"go_version"`
		Dirty                  *bool
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	assert.Equal(t, "github.com/rayd-go/rayd", v.Module)
	assert.NotEmpty(t, v.Commit)
	assert.Contains(t, []string{"ldflags", "vcs", "none"}, v.Source)
	assert.NotNil(t, v.Dirty)
	assert.True(t, strings.HasPrefix(v.GoVersion, "go"))
	plain, _, _ := runHere("version")
	dashed, _, code := runHere("--version")
	assert.Equal(t, 0, code)
	assert.Equal(t, plain, dashed)
}

func TestDemoOnTheCPUBackend(t *testing.T) {
	out, errb, code := runHere("demo", "-rays", "2000", "-backend", "cpu")
	require.Equal(t, 0, code, errb)
	assert.Contains(t, out, "traced on the CPU REFERENCE")
	assert.Contains(t, out, "hits: ")
}

func TestDemoOnGPU(t *testing.T) {
	gputest.MustHaveDevices(t, 1)
	out, errb, code := runHere("demo", "-rays", "100000", "-backend", "cuda")
	require.Equal(t, 0, code, errb)
	assert.Contains(t, out, "traced on CUDA device 0")
	t.Log("\n" + out)
}
