package launch

import (
	"fmt"
	"strconv"
	"strings"
)

// Environment variables OptiX itself reads when a device context is
// created. They take precedence over OptiXConfig: OPTIX_CACHE_PATH moves
// the disk cache (give each process of a multi-process run its own), and
// OPTIX_CACHE_MAXSIZE sets the cache's size limit (0 disables the cache).
const (
	EnvOptiXCachePath    = "OPTIX_CACHE_PATH"
	EnvOptiXCacheMaxSize = "OPTIX_CACHE_MAXSIZE"
)

// cachePlan is what newOptiXContext does to a fresh context's disk cache.
type cachePlan struct {
	setLocation string // "" = leave the location alone
	disable     bool   // optixDeviceContextSetCacheEnabled(0)
	setSizes    bool   // optixDeviceContextSetCacheDatabaseSizes(low, high)
	low, high   uint64
	notes       []string // why a configured setting was not applied
}

// planCache decides how to apply cfg's cache settings given the process
// environment (getenv). The environment wins: with OPTIX_CACHE_PATH set the
// configured directory is not applied (OptiX would ignore it anyway), and
// with a valid OPTIX_CACHE_MAXSIZE the configured sizes are not applied.
// Disabling the cache is always honoured (OptiX cannot be re-enabled by the
// environment after the API disabled it, and disabling never loses data).
func planCache(cfg OptiXConfig, getenv func(string) string) (cachePlan, error) {
	var p cachePlan
	if cfg.CacheHighBytes != 0 && cfg.CacheLowBytes > cfg.CacheHighBytes {
		return p, fmt.Errorf("launch: OptiXConfig: cache low water mark %d above high water mark %d", cfg.CacheLowBytes, cfg.CacheHighBytes)
	}
	envPath := strings.TrimSpace(getenv(EnvOptiXCachePath))
	envSize, sizeSet := parseCacheMaxSize(getenv(EnvOptiXCacheMaxSize))
	switch {
	case cfg.CacheDir == "":
	case envPath != "":
		p.notes = append(p.notes, fmt.Sprintf("%s=%s overrides OptiXConfig.CacheDir %s", EnvOptiXCachePath, envPath, cfg.CacheDir))
	default:
		p.setLocation = cfg.CacheDir
	}
	p.disable = cfg.DisableCache
	if cfg.CacheLowBytes != 0 || cfg.CacheHighBytes != 0 {
		if sizeSet {
			p.notes = append(p.notes, fmt.Sprintf("%s=%d overrides OptiXConfig cache sizes", EnvOptiXCacheMaxSize, envSize))
		} else {
			p.setSizes, p.low, p.high = true, cfg.CacheLowBytes, cfg.CacheHighBytes
		}
	}
	return p, nil
}

// parseCacheMaxSize reports whether v is a value OptiX honours for
// OPTIX_CACHE_MAXSIZE (a non-negative integer; others are ignored by OptiX).
func parseCacheMaxSize(v string) (uint64, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseUint(v, 10, 64)
	return n, err == nil
}

// OptiXCacheInfo describes a context's disk cache as OptiX reports it.
type OptiXCacheInfo struct {
	Enabled   bool   `json:"enabled"`
	Location  string `json:"location"` // "" when disabled
	LowBytes  uint64 `json:"low_bytes"`
	HighBytes uint64 `json:"high_bytes"`
}
