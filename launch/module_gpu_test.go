package launch_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/internal/gputest"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ptx"
)

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }

// trivialKernel runs one cheap kernel of a module on s and checks what it
// wrote, if anything.
type trivialKernel func(t *testing.T, d *launch.Device, s *launch.Stream)

// zeroLaunch launches entry with every argument zero or null, one warp
// (within every kernel's launch bounds): each of these kernels returns at
// once for n = 0 (no row, no counter, no shared grid).
func zeroLaunch(module, entry string) trivialKernel {
	return func(t *testing.T, d *launch.Device, s *launch.Stream) {
		k, err := d.Kernel(module, entry)
		require.NoError(t, err)
		args := make([]any, len(k.Params()))
		for i, p := range k.Params() {
			switch {
			case p.Pointer:
				args[i] = launch.Null
			case p.Type == "f32":
				args[i] = float32(0)
			case p.Type == "f64":
				args[i] = float64(0)
			case p.Size == 8:
				args[i] = uint64(0)
			default:
				args[i] = uint32(0)
			}
		}
		require.NoError(t, k.Launch(s, launch.Dim3{X: 1}, launch.Threads(32), 0, args...))
		require.NoError(t, s.Synchronize())
	}
}

// alloc allocates n elements poisoned with the 32-bit pattern v.
func alloc[T launch.Elem](t *testing.T, d *launch.Device, s *launch.Stream, n int, v uint32) *launch.Buffer[T] {
	t.Helper()
	b, err := launch.Alloc[T](d, n)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	require.NoError(t, b.Memset32(s, v))
	return b
}

// trivialKernels has one kernel per CUDA module; the ones that write
// something are checked.
var trivialKernels = map[string]trivialKernel{
	"basic": func(t *testing.T, d *launch.Device, s *launch.Stream) {
		const n = 1000
		out := alloc[float32](t, d, s, n, poison)
		k, err := d.Kernel("basic", "rayd_fill_f32")
		require.NoError(t, err)
		require.NoError(t, k.Launch(s, launch.Blocks(n, 256), launch.Threads(256), 0, out, uint32(n), float32(2.5)))
		got := make([]float32, n)
		require.NoError(t, out.Download(s, got))
		for i, v := range got {
			require.Equal(t, float32(2.5), v, "out[%d]", i)
		}
	},
	"bvh_build": func(t *testing.T, d *launch.Device, s *launch.Stream) {
		status := alloc[uint32](t, d, s, 16, poison)
		k, err := d.Kernel("bvh_build", "rayd_bvh_init")
		require.NoError(t, err)
		require.NoError(t, k.Launch(s, launch.Dim3{X: 1}, launch.Threads(32), 0, status))
		got := make([]uint32, 16)
		require.NoError(t, status.Download(s, got))
		assert.NotContains(t, got, uint32(poison), "rayd_bvh_init writes every status word")
	},
	"rf_accum": func(t *testing.T, d *launch.Device, s *launch.Stream) {
		const n = 777
		acc, err := launch.Alloc[float64](d, n)
		require.NoError(t, err)
		t.Cleanup(func() { _ = acc.Close() })
		src := make([]float64, n)
		for i := range src {
			src[i] = float64(i) / 4
		}
		require.NoError(t, acc.Upload(s, src))
		out := alloc[float32](t, d, s, n, math.Float32bits(1))
		k, err := d.Kernel("rf_accum", "rf_add_f64_to_f32")
		require.NoError(t, err)
		require.NoError(t, k.Launch(s, launch.Blocks(n, 128), launch.Threads(128), 0, acc, uint64(n), out)) // RF_THREADS
		got := make([]float32, n)
		require.NoError(t, out.Download(s, got))
		for i, v := range got {
			require.Equal(t, 1+float32(src[i]), v, "out[%d]", i)
		}
	},
	"rf_paths": func(t *testing.T, d *launch.Device, s *launch.Stream) {
		rows := alloc[uint32](t, d, s, 64, poison) // one path record and room to spare
		k, err := d.Kernel("rf_paths", "rf_dfr_paths_init")
		require.NoError(t, err)
		require.NoError(t, k.Launch(s, launch.Dim3{X: 1}, launch.Threads(128), 0, rows, uint32(1))) // RF_THREADS
		got := make([]uint32, 64)
		require.NoError(t, rows.Download(s, got))
		assert.Equal(t, []uint32{0, 0xffffffff, 0xffffffff, 0}, got[:4], "an empty path record")
	},
	"rf_fold": func(t *testing.T, d *launch.Device, s *launch.Stream) {
		acc := alloc[uint32](t, d, s, 16, poison) // 8 doubles, poisoned word by word
		ints := alloc[int32](t, d, s, 4, poison)
		k, err := d.Kernel("rf_fold", "rf_zero_partial")
		require.NoError(t, err)
		require.NoError(t, k.Launch(s, launch.Dim3{X: 1}, launch.Threads(128), 0, acc, int64(8), ints, int64(4)))
		gotAcc, gotInts := make([]uint32, 16), make([]int32, 4)
		require.NoError(t, acc.Download(s, gotAcc))
		require.NoError(t, ints.Download(s, gotInts))
		assert.Equal(t, make([]uint32, 16), gotAcc, "a zeroed partial")
		assert.Equal(t, make([]int32, 4), gotInts, "zeroed counters")
	},
	"closest":    zeroLaunch("closest", "rayd_closest_point"),
	"edge":       zeroLaunch("edge", "rayd_edge_nearest_point"),
	"edge_vjp":   zeroLaunch("edge_vjp", "rayd_edge_point_vjp"),
	"rf_refl":    zeroLaunch("rf_refl", "rf_accum_reflections"),
	"trace":      zeroLaunch("trace", "rayd_intersect"),
	"visibility": zeroLaunch("visibility", "rayd_segment_blockers"),
	"crossings":  zeroLaunch("crossings", "rayd_crossings8"),
	"winding":    zeroLaunch("winding", "rayd_winding_sums"),
	"reorder":    zeroLaunch("reorder", "rayd_reorder_keys"),
	"instance":   zeroLaunch("instance", "rayd_intersect_instanced"),
	"tlas_build": zeroLaunch("tlas_build", "rayd_tlas_build"), // n = 0: no work
	"vjp":        zeroLaunch("vjp", "rayd_intersect_vjp"),
}

// TestModulesLoadFromCubinAndFromPTX loads every CUDA module twice on the
// device present, in a Device opened without and then with RAYD_PTX_JIT=1:
// from its cubin where one matches the device (else its PTX), then from its
// PTX. Each time every entry point resolves and one kernel of the module
// runs. The OptiX module has no image for cuModuleLoadDataEx.
func TestModulesLoadFromCubinAndFromPTX(t *testing.T) {
	gputest.MustHaveDevices(t, 1)
	m, err := ptx.EmbeddedManifest()
	require.NoError(t, err)
	for _, rec := range m.Modules {
		if rec.Loader == ptx.LoaderCUDA {
			require.Contains(t, trivialKernels, rec.Name, "every CUDA module needs a trivial kernel here")
		}
	}
	for _, mode := range []struct {
		name string
		env  string
	}{{"cubin", "0"}, {"ptx-jit", "1"}} {
		t.Run(mode.name, func(t *testing.T) {
			t.Setenv(launch.EnvPTXJIT, mode.env)
			d, err := launch.Open(0)
			require.NoError(t, err)
			defer d.Close()
			s, err := d.NewStream()
			require.NoError(t, err)
			defer s.Close()
			forced := mode.env == "1"
			require.Equal(t, forced, d.ForcedJIT())
			devArch, _, ok := ptx.ParseArch(d.Arch())
			require.True(t, ok, d.Arch())
			loaded := 0
			for _, rec := range m.Modules {
				l, err := d.LoadModule(rec.Name)
				if rec.Loader == ptx.LoaderOptiX {
					require.ErrorIs(t, err, launch.ErrNoImage, rec.Name)
					continue
				}
				_, hasCubin := rec.Cubin(d.Arch())
				if target, _, _ := ptx.ParseArch(rec.Target); (forced || !hasCubin) && devArch < target {
					require.ErrorIs(t, err, launch.ErrNoImage, "%s: PTX for %s on %s", rec.Name, rec.Target, d.Arch())
					continue
				}
				require.NoError(t, err, rec.Name)
				loaded++
				want := launch.ImagePTX
				if hasCubin && !forced {
					want = launch.ImageCubin
				}
				assert.Equal(t, want, l.Image, rec.Name)
				assert.Equal(t, d.Arch(), l.Device)
				assert.Positive(t, l.Bytes)
				assert.Positive(t, l.Load)
				t.Logf("%-10s %-7s %-6s verify %7.2f ms, load %8.2f ms %s", rec.Name, l.Image, l.Arch,
					ms(l.Verify), ms(l.Load), l.Reason)
				for _, e := range rec.Entries {
					_, err := d.Kernel(rec.Name, e.Name)
					require.NoError(t, err, "%s.%s", rec.Name, e.Name)
				}
				trivialKernels[rec.Name](t, d, s)
			}
			loads := d.ModuleLoads()
			require.Len(t, loads, loaded)
			for i := 1; i < len(loads); i++ {
				assert.Less(t, loads[i-1].Seq, loads[i].Seq)
			}
		})
	}
}
