package launch

import (
	"errors"
	"testing"
)

func envOf(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func TestPlanCacheHonoursEnvironment(t *testing.T) {
	cfg := OptiXConfig{CacheDir: "/cache/a", CacheLowBytes: 1 << 20, CacheHighBytes: 1 << 21}
	cases := []struct {
		name     string
		cfg      OptiXConfig
		env      map[string]string
		location string
		sizes    bool
		disable  bool
		notes    int
	}{
		{name: "defaults", cfg: OptiXConfig{}},
		{name: "configured", cfg: cfg, location: "/cache/a", sizes: true},
		{name: "path env wins", cfg: cfg, env: map[string]string{EnvOptiXCachePath: "/rank/3"}, sizes: true, notes: 1},
		{name: "size env wins", cfg: cfg, env: map[string]string{EnvOptiXCacheMaxSize: "1048576"}, location: "/cache/a", notes: 1},
		{name: "size env 0 wins too", cfg: cfg, env: map[string]string{EnvOptiXCacheMaxSize: "0"}, location: "/cache/a", notes: 1},
		{name: "invalid size env is ignored, as OptiX does", cfg: cfg, env: map[string]string{EnvOptiXCacheMaxSize: "-5"},
			location: "/cache/a", sizes: true},
		{name: "both env", cfg: cfg, env: map[string]string{EnvOptiXCachePath: "/x", EnvOptiXCacheMaxSize: " 42 "}, notes: 2},
		{name: "env alone changes nothing here", env: map[string]string{EnvOptiXCachePath: "/x", EnvOptiXCacheMaxSize: "0"}},
		{name: "disable always applies", cfg: OptiXConfig{DisableCache: true}, env: map[string]string{EnvOptiXCachePath: "/x"},
			disable: true},
	}
	for _, c := range cases {
		p, err := planCache(c.cfg, envOf(c.env))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if p.setLocation != c.location || p.setSizes != c.sizes || p.disable != c.disable || len(p.notes) != c.notes {
			t.Errorf("%s: plan %+v, want location %q sizes %v disable %v notes %d", c.name, p, c.location, c.sizes, c.disable, c.notes)
		}
		if p.setSizes && (p.low != c.cfg.CacheLowBytes || p.high != c.cfg.CacheHighBytes) {
			t.Errorf("%s: sizes %d/%d", c.name, p.low, p.high)
		}
	}
	if _, err := planCache(OptiXConfig{CacheLowBytes: 2, CacheHighBytes: 1}, envOf(nil)); err == nil {
		t.Error("low above high must be rejected")
	}
	if err := SetOptiXConfig(OptiXConfig{CacheLowBytes: 2, CacheHighBytes: 1}); err == nil {
		t.Error("SetOptiXConfig must validate")
	}
}

func TestOptiXWithoutDevice(t *testing.T) {
	d := &Device{}
	d.closed.Store(true)
	if _, err := d.OptiX(); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed device: %v", err)
	}
	var g GAS
	if err := g.Refit(nil); !errors.Is(err, ErrNotUpdatable) {
		t.Fatalf("refit of a static GAS: %v", err)
	}
	if g.Bytes() != 0 || g.Updatable() || g.Close() != nil {
		t.Fatal("a zero GAS holds nothing")
	}
	spec := OptiXPipelineSpec{Module: "m", Raygen: "__raygen__a", Miss: "__miss__b", ClosestHit: "__closesthit__c"}
	if spec.key() == (OptiXPipelineSpec{Module: "m", Raygen: "__raygen__a", Miss: "__miss__b", ClosestHit: "__closesthit__d"}).key() {
		t.Fatal("pipeline keys must differ by program")
	}
	o := (OptiXModuleOptions{PayloadValues: 3}).compile()
	if o.ParamsName != "params" || o.AttributeValues != 2 || !o.TrianglesOnly || o.TraversableGraph != 1 {
		t.Fatalf("module options: %+v", o)
	}
	c := &OptiXContext{}
	if _, err := c.Pipeline(OptiXPipelineSpec{Module: "m"}); err == nil {
		t.Fatal("an incomplete pipeline spec must be rejected")
	}
}
