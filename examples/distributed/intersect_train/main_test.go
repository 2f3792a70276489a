package main

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/jobtest"
)

// asMainEnv makes the test binary run the command itself (so a launcher
// can start it as a rank); runTrainBin, when set, names a built binary of
// the command to launch instead.
const (
	asMainEnv   = "RAYD_INTERSECT_TRAIN_AS_MAIN"
	runTrainBin = "RAYD_INTERSECT_TRAIN_BIN"
)

// example is this command run as a rank (see jobtest.Program).
var example = jobtest.Program{AsMain: asMainEnv, Bin: runTrainBin}

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func TestWithoutALauncherItPrintsUsage(t *testing.T) {
	prog, extra := example.Command()
	cmd := exec.Command(prog, "--steps=2")
	cmd.Env = append(example.LauncherFree(), extra...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, stderr.String())
	assert.Equal(t, 2, ee.ExitCode())
	assert.Contains(t, stderr.String(), "no launcher environment")
	assert.Contains(t, stderr.String(), "rayd launch -n 2")
}

func TestFlagErrors(t *testing.T) {
	for _, args := range [][]string{{"--steps=0"}, {"--optimizer=lbfgs"}, {"stray"}, {"--timeout=-1"}, {"--nope"}} {
		var out, errb bytes.Buffer
		assert.Equal(t, 2, run(args, &out, &errb), "%v", args)
	}
	var out, errb bytes.Buffer
	assert.Equal(t, 0, run([]string{"-h"}, &out, &errb))
	assert.Contains(t, errb.String(), "-check-every")
}

func TestRecipePieces(t *testing.T) {
	m := gridMesh(4)
	assert.Len(t, m.Vertices, 3*25)
	assert.Len(t, m.Faces, 3*32)
	assert.True(t, m.Dynamic)

	xy, target := globalRays(1000, 1234)
	xy2, target2 := globalRays(1000, 1234)
	assert.Equal(t, xy, xy2, "every rank generates the same batch")
	assert.Equal(t, target, target2)
	other, _ := globalRays(1000, 1235)
	assert.NotEqual(t, xy, other)
	for i := range 1000 {
		x, y := float64(xy[2*i]), float64(xy[2*i+1])
		require.True(t, math.Abs(x) <= 0.9 && math.Abs(y) <= 0.9)
		require.InDelta(t, rayZ-0.3*math.Exp(-2*(x*x+y*y)), target[i], 1e-15)
		require.True(t, target[i] > 1.69 && target[i] < 2)
	}

	// Identical gradients give identical parameters; zero gradients (the
	// x and y columns) leave them alone.
	p1 := []float32{0.5, -0.25, 0, 1, 1, 1}
	p2 := append([]float32(nil), p1...)
	g := []float32{0, 0, 0.3, 0, 0, -2e-3}
	o1, o2 := newOptimizer("adam", 0.02, 6), newOptimizer("adam", 0.02, 6)
	for range 5 {
		o1.apply(p1, g)
		o2.apply(p2, g)
	}
	assert.Equal(t, paramHash(p1), paramHash(p2))
	assert.Equal(t, []float32{0.5, -0.25}, p1[:2])
	assert.InDelta(t, -0.1, p1[2], 1e-6, "Adam moves by lr per step against a steady gradient")
	assert.InDelta(t, 1.1, p1[5], 1e-6)
	sgd := []float32{1}
	newOptimizer("sgd", 0.5, 1).apply(sgd, []float32{2})
	assert.Equal(t, []float32{0}, sgd)
	assert.Len(t, paramHash(p1), 64)
	assert.NotEqual(t, paramHash([]float32{0}), paramHash([]float32{float32(math.Copysign(0, -1))}), "the hash sees bits")
}
