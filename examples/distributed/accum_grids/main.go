package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/rayd-go/rayd/dist"
)

// config holds the command-line flags.
type config struct {
	samples, resolution int
	seed                int64
	out                 string
	timeout             time.Duration
	watchdog            bool
}

// maxResolution keeps resolution² within int32 (the grid's cell count).
const maxResolution = 46340

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// seconds is a duration flag that also accepts a bare number of seconds
// ("600", "600s" and "10m" are the same).
type seconds time.Duration

func (s *seconds) String() string { return time.Duration(*s).String() }

func (s *seconds) Set(v string) error {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > math.MaxInt64/1e9 {
			return fmt.Errorf("%q is out of range", v)
		}
		*s = seconds(f * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("%q is neither seconds nor a duration", v)
	}
	*s = seconds(d)
	return nil
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	c := config{timeout: 600 * time.Second}
	fs := flag.NewFlagSet("accum_grids", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.samples, "samples", 1<<20, "requested direct samples (rounded up to a multiple of 32·WORLD_SIZE)")
	fs.IntVar(&c.resolution, "resolution", 8, "grid cells per side")
	fs.Int64Var(&c.seed, "seed", 7, "Monte-Carlo seed, the same on every rank (0 ≤ seed < 2³¹)")
	fs.StringVar(&c.out, "out", "", "JSON file rank 0 writes the merged grids to (none when empty)")
	fs.Var((*seconds)(&c.timeout), "timeout", "time any collective or the rendezvous may take (seconds or a duration)")
	fs.BoolVar(&c.watchdog, "watchdog", true, "fail at once when a peer's connection drops (false: only NCCL errors and --timeout)")
	fs.Usage = func() {
		usage(stderr)
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	case c.samples < 0 || c.samples > math.MaxInt32:
		return c, fmt.Errorf("--samples %d: want 0 ≤ samples < 2³¹", c.samples)
	case c.resolution < 1 || c.resolution > maxResolution:
		return c, fmt.Errorf("--resolution %d: want 1 … %d", c.resolution, maxResolution)
	case c.seed < 0 || c.seed > math.MaxInt32:
		return c, fmt.Errorf("--seed %d: want 0 ≤ seed < 2³¹", c.seed)
	case c.timeout <= 0:
		return c, errors.New("--timeout must be positive")
	}
	return c, nil
}

func usage(w io.Writer) {
	fmt.Fprintln(w, `usage: accum_grids [flags]

Start one process per GPU with a launcher that sets RANK, WORLD_SIZE and LOCAL_RANK:
  rayd launch -n 2 accum_grids [flags]
  torchrun --nproc_per_node=2 --no-python accum_grids [flags]
  srun --ntasks-per-node=2 --gpus-per-node=2 accum_grids [flags]
  mpirun -np 2 accum_grids [flags]`)
}

// run is main without the exit: 0 on success, 1 on failure, 2 on usage.
func run(args []string, stdout, stderr io.Writer) (code int) {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "accum_grids:", err)
		return 2
	}
	env, err := dist.FromEnvironment()
	if err != nil {
		fmt.Fprintln(stderr, "accum_grids:", err)
		usage(stderr)
		return 2
	}
	if total := dist.LaneTotal(cfg.samples, env.WorldSize); total > math.MaxInt32 {
		fmt.Fprintf(stderr, "accum_grids: --samples %d over %d ranks is a lane space of %d (more than 2³¹−1)\n",
			cfg.samples, env.WorldSize, total)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "rank=%d FAILED: panic: %v\n", env.Rank, p)
			code = 1
		}
	}()
	if err := rank(ctx, env, cfg, stdout); err != nil {
		fmt.Fprintf(stderr, "rank=%d FAILED: %v\n", env.Rank, err)
		return 1
	}
	return 0
}

// rank sets up the communicator and runs the recipe; the communicator is
// aborted on every failure (peers learn of it at once) and closed on every
// way out.
func rank(ctx context.Context, env dist.Env, cfg config, stdout io.Writer) (err error) {
	opt := dist.Options{Timeout: cfg.timeout, NoWatchdog: !cfg.watchdog, OptiXCacheRoot: os.Getenv("RAYD_EXAMPLE_OPTIX_CACHE_ROOT")}
	return dist.Run(ctx, env, opt, func(ctx context.Context, comm *dist.Comm) error {
		w := laneWindow(cfg.samples, env.Rank, env.WorldSize)
		fmt.Fprintf(stdout, "rank=%d world=%d device=cuda:%d launcher=%s lanes=[%d,%d) total=%d\n", env.Rank, env.WorldSize,
			comm.Device(), env.Launcher, w.begin, w.begin+w.count, w.total)
		local, err := accumulateOnDevice(ctx, comm.Device(), cfg, w)
		if err != nil {
			return err
		}
		red, err := newNCCLReducer(comm)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, red.close()) }()
		merged, err := reduce(ctx, red, local)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "rank=%d local_power_sum=%.17g merged_power_sum=%.17g merged_direct_count=%d merged_grid_checksum=%.17g\n",
			env.Rank, sum(local.grids[0]), sum(merged.grids[0]), merged.counters[0], merged.checksum())
		if env.Rank == 0 && cfg.out != "" {
			if err := writeOutput(cfg.out, newOutput(merged, cfg, w.total, env.WorldSize)); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "rank=0 wrote %s\n", cfg.out)
		}
		return comm.Barrier(ctx) // the closing barrier: every rank finished
	})
}
