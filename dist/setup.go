package dist

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Environment variables this package reads or sets.
const (
	// EnvNVLS is NCCL's NVLink SHARP (multicast) switch; rayd-go keeps it
	// at "0" in every environment it builds.
	EnvNVLS = "NCCL_NVLS_ENABLE"
	// EnvOptiXCachePath is OptiX's disk-cache location.
	EnvOptiXCachePath = "OPTIX_CACHE_PATH"
	// EnvOptiXCacheRoot is the directory under which PrepareProcess creates
	// the per-rank caches rank-<RANK> (default: a per-user directory in
	// os.TempDir()).
	EnvOptiXCacheRoot = "RAYD_OPTIX_CACHE_ROOT"
)

// PrepareProcess applies the per-process rules of a rank before the first
// GPU call: NCCL_NVLS_ENABLE=0 unless the environment already sets it, and a
// private OptiX disk cache: when OPTIX_CACHE_PATH is unset it creates
// <root>/rank-<RANK> (root: the argument, else RAYD_OPTIX_CACHE_ROOT, else a
// per-user directory under os.TempDir()) and exports it, because ranks
// compiling into one shared cache database concurrently is a known failure.
// It returns the cache path in effect. OptiX reads it when its device
// context is created, so call this before the first query.
func PrepareProcess(env Env, root string) (string, error) {
	if os.Getenv(EnvNVLS) == "" {
		if err := os.Setenv(EnvNVLS, "0"); err != nil {
			return "", err
		}
	}
	if p := os.Getenv(EnvOptiXCachePath); p != "" {
		return p, nil
	}
	if root == "" {
		root = os.Getenv(EnvOptiXCacheRoot)
	}
	if root == "" {
		root = filepath.Join(os.TempDir(), "rayd-optix-cache-"+strconv.Itoa(os.Getuid()))
	}
	dir := filepath.Join(root, "rank-"+strconv.Itoa(env.Rank))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("dist: private OptiX cache: %w", err)
	}
	return dir, os.Setenv(EnvOptiXCachePath, dir)
}

// DeviceFor picks the CUDA device of a rank from its local rank and the
// number of visible devices: LOCAL_RANK itself, or device 0 when the
// launcher gave each rank a single visible device (CUDA_VISIBLE_DEVICES per
// rank). A local rank beyond the visible devices is an error: two ranks
// would share a GPU.
func DeviceFor(localRank, visible int) (int, error) {
	switch {
	case visible < 1:
		return 0, fmt.Errorf("dist: no CUDA device visible")
	case localRank < visible:
		return localRank, nil
	case visible == 1:
		return 0, nil
	}
	return 0, fmt.Errorf("dist: LOCAL_RANK %d but only %d CUDA devices are visible (one rank per GPU)", localRank, visible)
}
