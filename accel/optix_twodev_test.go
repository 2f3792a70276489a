package accel

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/launch"
)

// optixTrials is how many times the concurrency regressions repeat (the
// seed's hang needed tens of trials to show).
const optixTrials = 50

// optixTwoDevEnv marks the child run of TestGPUOptiXColdFirstIntersectTwoDevices
// and names its mode ("parallel" or "serial").
const optixTwoDevEnv = "RAYD_OPTIX_TWODEV_CHILD"

// TestGPUOptiXColdFirstIntersectTwoDevices measures, in fresh processes with
// an empty OptiX disk cache, the first intersect on two devices driven from
// two goroutines at once against the same work device after device (the
// seed measured 0.47 s vs 0.52 s on its machine). It logs; it does not
// assert a ratio.
func TestGPUOptiXColdFirstIntersectTwoDevices(t *testing.T) {
	gputest.MustHaveDevices(t, 2)
	if mode := os.Getenv(optixTwoDevEnv); mode != "" {
		twoDeviceChild(t, mode == "parallel")
		return
	}
	res := map[string]float64{}
	for _, mode := range []string{"parallel", "serial", "parallel", "serial"} {
		var env []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, launch.EnvOptiXCacheMaxSize+"=") && !strings.HasPrefix(kv, launch.EnvOptiXCachePath+"=") {
				env = append(env, kv)
			}
		}
		env = append(env, optixTwoDevEnv+"="+mode, launch.EnvOptiXCachePath+"="+t.TempDir())
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestGPUOptiXColdFirstIntersectTwoDevices$", "-test.v", "-test.count=1")
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("%s child: %v\n%s", mode, err, out)
		}
		var sec float64
		for _, line := range strings.Split(string(out), "\n") {
			if i := strings.Index(line, "OPTIX_TWODEV "); i >= 0 {
				if err := json.Unmarshal([]byte(line[i+len("OPTIX_TWODEV "):]), &sec); err != nil {
					t.Fatal(err)
				}
			}
		}
		if sec <= 0 {
			t.Fatalf("%s child printed no timing:\n%s", mode, out)
		}
		if old, ok := res[mode]; !ok || sec < old {
			res[mode] = sec
		}
	}
	t.Logf("cold first intersect on 2 devices (best of 2 fresh processes each): two goroutines %.3f s, device after device %.3f s",
		res["parallel"], res["serial"])
}

// twoDeviceChild does one cold first intersect per device, concurrently or
// device after device, and prints the wall time.
func twoDeviceChild(t *testing.T, parallel bool) {
	tb := tables(t, cloudMesh(20000, 0.02, 3))
	o, d, tmax, active := testRays(tb, 1<<14, 1)
	one := func(ord int) error {
		dev, err := launch.Open(ord)
		if err != nil {
			return err
		}
		defer dev.Close()
		s, err := dev.NewStream()
		if err != nil {
			return err
		}
		defer s.Close()
		ox, err := BuildOptiX(s, tb)
		if err != nil {
			return err
		}
		defer ox.Close()
		rb := newRayBatch(t, s, o, d, tmax, active)
		out := Hits{T: devOut[float32](t, s, rb.dev.N)}
		if err := ox.Intersect(s, rb.dev, geom.FlagsNone, out); err != nil {
			return err
		}
		return s.Synchronize()
	}
	start := time.Now()
	errs := make([]error, 2)
	if parallel {
		var wg sync.WaitGroup
		for i := range errs {
			wg.Add(1)
			go func(i int) { defer wg.Done(); errs[i] = one(i) }(i)
		}
		wg.Wait()
	} else {
		for i := range errs {
			errs[i] = one(i)
		}
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	fmt.Printf("OPTIX_TWODEV %v\n", time.Since(start).Seconds())
}
