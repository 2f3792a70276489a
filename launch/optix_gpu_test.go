package launch

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/internal/gputest"
)

// openOptiX opens device ordinal and its OptiX context (fails, never skips,
// when OptiX is missing on a GPU machine).
func openOptiX(t *testing.T, ordinal int) (*Device, *OptiXContext) {
	t.Helper()
	d, err := Open(ordinal)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	c, err := d.OptiX()
	if err != nil {
		t.Fatal(err)
	}
	return d, c
}

// TestGPUOptiXContextMemoised: concurrent first calls from goroutines with
// their own Device of the same ordinal create one context; it survives the
// Devices' Close.
func TestGPUOptiXContextMemoised(t *testing.T) {
	gputest.MustHaveDevices(t, 1)
	if err := ShutdownOptiX(); err != nil {
		t.Fatal(err)
	}
	const n = 8
	ctxs := make([]*OptiXContext, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := Open(0)
			if err != nil {
				errs[i] = err
				return
			}
			defer d.Close()
			ctxs[i], errs[i] = d.OptiX()
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, c := range ctxs {
		if c != ctxs[0] {
			t.Fatal("one device got two OptiX contexts")
		}
	}
	_, c := openOptiX(t, 0)
	if c != ctxs[0] {
		t.Fatal("the context did not survive its Devices")
	}
	rt, err := c.RTCoreVersion()
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.CacheInfo()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cuda:0 OptiX context created in %v; RT core version %d; cache %+v", c.CreationTime(), rt, info)
	if err := SetOptiXConfig(OptiXConfig{}); !errors.Is(err, ErrOptiXConfigured) {
		t.Fatalf("configuring with live contexts: %v", err)
	}
}

// optixCacheChildEnv selects the case a child run of
// TestGPUOptiXCacheControls reports.
const optixCacheChildEnv = "RAYD_OPTIX_CACHE_CHILD"

// TestGPUOptiXCacheControls: OPTIX_CACHE_PATH and OPTIX_CACHE_MAXSIZE win
// over OptiXConfig; without them the configured location and sizes apply.
// OptiX reads the environment when a context is created, so every case runs
// in a fresh child process of the test binary.
func TestGPUOptiXCacheControls(t *testing.T) {
	gputest.MustHaveDevices(t, 1)
	if c := os.Getenv(optixCacheChildEnv); c != "" {
		cacheChild(t, c)
		return
	}
	envDir, cfgDir := filepath.Join(t.TempDir(), "env"), filepath.Join(t.TempDir(), "cfg")
	cases := []struct {
		name  string
		env   []string
		check func(OptiXCacheInfo) bool
	}{
		{"env-wins", []string{EnvOptiXCachePath + "=" + envDir, EnvOptiXCacheMaxSize + "=1048576"}, func(i OptiXCacheInfo) bool {
			return i.Enabled && filepath.Clean(i.Location) == envDir && i.LowBytes == 524288 && i.HighBytes == 1048576
		}},
		{"env-disables", []string{EnvOptiXCacheMaxSize + "=0"}, func(i OptiXCacheInfo) bool { return !i.Enabled }},
		{"configured", nil, func(i OptiXCacheInfo) bool {
			return i.Enabled && filepath.Clean(i.Location) == cfgDir && i.LowBytes == 1<<22 && i.HighBytes == 1<<23
		}},
		{"disabled", nil, func(i OptiXCacheInfo) bool { return !i.Enabled }},
	}
	for _, c := range cases {
		var env []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, EnvOptiXCachePath+"=") && !strings.HasPrefix(kv, EnvOptiXCacheMaxSize+"=") {
				env = append(env, kv)
			}
		}
		env = append(append(env, c.env...), optixCacheChildEnv+"="+c.name, "RAYD_TEST_CFG_DIR="+cfgDir)
		cmd := exec.Command(os.Args[0], "-test.run=^TestGPUOptiXCacheControls$", "-test.v", "-test.count=1")
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s child: %v\n%s", c.name, err, out)
		}
		_, js, ok := strings.Cut(string(out), "OPTIX_CACHE ")
		var info OptiXCacheInfo
		if !ok || json.NewDecoder(strings.NewReader(js)).Decode(&info) != nil {
			t.Fatalf("%s child printed no cache info:\n%s", c.name, out)
		}
		t.Logf("%s: %+v", c.name, info)
		if !c.check(info) {
			t.Errorf("%s: unexpected cache state %+v", c.name, info)
		}
	}
}

// cacheChild creates a context with the case's configuration and prints
// its cache state.
func cacheChild(t *testing.T, name string) {
	cfg := OptiXConfig{CacheDir: os.Getenv("RAYD_TEST_CFG_DIR"), CacheLowBytes: 1 << 22, CacheHighBytes: 1 << 23}
	if name == "disabled" {
		cfg = OptiXConfig{DisableCache: true}
	}
	if err := SetOptiXConfig(cfg); err != nil {
		t.Fatal(err)
	}
	_, c := openOptiX(t, 0)
	info, err := c.CacheInfo()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(info)
	fmt.Printf("OPTIX_CACHE %s\n", b)
}

// TestGPUGASBuildRefitCompact builds static (compacted) and updatable GASes
// over a small grid and refits the updatable one.
func TestGPUGASBuildRefitCompact(t *testing.T) {
	gputest.MustHaveDevices(t, 1)
	d, c := openOptiX(t, 0)
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const cells = 64
	var verts []float32
	var faces []int32
	for j := range cells + 1 {
		for i := range cells + 1 {
			verts = append(verts, float32(i), float32(j), 0)
		}
	}
	for j := range cells {
		for i := range cells {
			a := int32(j*(cells+1) + i)
			faces = append(faces, a, a+1, a+cells+1, a+1, a+cells+2, a+cells+1)
		}
	}
	vb, err := Alloc[float32](d, len(verts))
	if err != nil {
		t.Fatal(err)
	}
	defer vb.Close()
	fb, err := Alloc[int32](d, len(faces))
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	if err := vb.Upload(s, verts); err != nil {
		t.Fatal(err)
	}
	if err := fb.Upload(s, faces); err != nil {
		t.Fatal(err)
	}
	in := GASInput{Vertices: vb, Faces: fb}
	static, err := c.BuildGAS(s, in, GASOptions{Compact: true})
	if err != nil {
		t.Fatal(err)
	}
	defer static.Close()
	dyn, err := c.BuildGAS(s, in, GASOptions{AllowUpdate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer dyn.Close()
	t.Logf("static (compacted) GAS %d bytes, updatable GAS + scratch %d bytes", static.Bytes(), dyn.Bytes())
	if static.Handle() == 0 || dyn.Handle() == 0 || static.Updatable() || !dyn.Updatable() {
		t.Fatalf("handles %#x %#x, updatable %v %v", static.Handle(), dyn.Handle(), static.Updatable(), dyn.Updatable())
	}
	if err := static.Refit(s); !errors.Is(err, ErrNotUpdatable) {
		t.Fatalf("refit of a static GAS: %v", err)
	}
	for i := 2; i < len(verts); i += 3 {
		verts[i] = 0.01 * float32(i%7)
	}
	if err := vb.Upload(s, verts); err != nil {
		t.Fatal(err)
	}
	if err := dyn.Refit(s); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	partial, err := Alloc[int32](d, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer partial.Close()
	if _, err := c.BuildGAS(s, GASInput{Vertices: vb, Faces: partial}, GASOptions{}); err == nil {
		t.Fatal("a partial face triple must be rejected")
	}
}

// TestGPUOptiXPipelineMemoised: a pipeline of the embedded OptiX module is
// built once per context, gets a stack size, and a bad entry name fails
// with OptiX's log.
func TestGPUOptiXPipelineMemoised(t *testing.T) {
	gputest.MustHaveDevices(t, 1)
	_, c := openOptiX(t, 0)
	spec := OptiXPipelineSpec{Module: "optix_trace", Options: OptiXModuleOptions{PayloadValues: 4},
		Raygen: "__raygen__intersect", Miss: "__miss__noop", ClosestHit: "__closesthit__hit"}
	p, err := c.Pipeline(spec)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Pipeline(spec)
	if err != nil || again != p {
		t.Fatalf("second build: %v (same %v)", err, again == p)
	}
	t.Logf("module %v, pipeline %v, continuation stack %d bytes", p.ModuleTime(), p.BuildTime(), p.StackBytes())
	if p.StackBytes() <= 0 {
		t.Fatal("no continuation stack")
	}
	bad := spec
	bad.Raygen = "__raygen__does_not_exist"
	_, err = c.Pipeline(bad)
	var oe *driver.OptiXError
	if !errors.As(err, &oe) {
		t.Fatalf("bad entry: %v", err)
	}
	t.Logf("bad entry: %v", err)
	other := spec
	other.Options.PayloadValues = 2
	other.Raygen = "__raygen__visible"
	if _, err := c.Pipeline(other); err == nil {
		t.Fatal("other compile options for a compiled module must be rejected")
	}
}
