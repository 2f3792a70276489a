package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rayd-go/rayd/dist"
)

// config holds the command-line flags.
type config struct {
	steps, rays, cells, checkEvery int
	lr                             float64
	seed                           uint64
	timeout                        time.Duration
	optimizer                      string
	watchdog                       bool
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("intersect_train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.steps, "steps", 24, "optimisation steps")
	fs.IntVar(&c.rays, "rays", 262144, "global ray count (sharded over the ranks)")
	fs.IntVar(&c.cells, "cells", 24, "grid cells per side (the trainable mesh)")
	fs.Float64Var(&c.lr, "lr", 0.02, "learning rate")
	fs.Uint64Var(&c.seed, "seed", 1234, "seed of the global ray batch")
	fs.IntVar(&c.checkEvery, "check-every", 4, "cross-rank drift check period (steps)")
	secs := fs.Float64("timeout", 600, "seconds any collective or the rendezvous may take")
	fs.StringVar(&c.optimizer, "optimizer", "adam", "adam or sgd")
	fs.BoolVar(&c.watchdog, "watchdog", true, "fail at once when a peer's connection drops (false: only NCCL errors and --timeout)")
	fs.Usage = func() {
		usage(stderr)
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.timeout = time.Duration(*secs * float64(time.Second))
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	case c.steps < 1 || c.rays < 1 || c.cells < 1 || c.checkEvery < 1:
		return c, errors.New("--steps, --rays, --cells and --check-every must be positive")
	case c.lr <= 0 || c.timeout <= 0:
		return c, errors.New("--lr and --timeout must be positive")
	case c.optimizer != "adam" && c.optimizer != "sgd":
		return c, fmt.Errorf("--optimizer %q: want adam or sgd", c.optimizer)
	}
	return c, nil
}

func usage(w io.Writer) {
	fmt.Fprintln(w, `usage: intersect_train [flags]

Start one process per GPU with a launcher that sets RANK, WORLD_SIZE and LOCAL_RANK:
  rayd launch -n 2 intersect_train [flags]
  torchrun --nproc_per_node=2 --no-python intersect_train [flags]
  srun --ntasks-per-node=2 --gpus-per-node=2 intersect_train [flags]
  mpirun -np 2 intersect_train [flags]`)
}

// run is main without the exit: 0 on success, 1 on failure, 2 on usage.
func run(args []string, stdout, stderr io.Writer) (code int) {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "intersect_train:", err)
		return 2
	}
	env, err := dist.FromEnvironment()
	if err != nil {
		fmt.Fprintln(stderr, "intersect_train:", err)
		usage(stderr)
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
	if err := train(ctx, env, cfg, stdout); err != nil {
		fmt.Fprintf(stderr, "rank=%d FAILED: %v\n", env.Rank, err)
		return 1
	}
	return 0
}

// train sets up the communicator and runs the loop; the communicator is
// aborted on every failure (peers learn of it at once) and closed on every
// way out.
func train(ctx context.Context, env dist.Env, cfg config, stdout io.Writer) (err error) {
	opt := dist.Options{Timeout: cfg.timeout, NoWatchdog: !cfg.watchdog, OptiXCacheRoot: os.Getenv("RAYD_EXAMPLE_OPTIX_CACHE_ROOT")}
	return dist.Run(ctx, env, opt, func(ctx context.Context, comm *dist.Comm) error {
		t, err := newTrainer(ctx, comm, cfg)
		if err != nil {
			return err
		}
		defer t.close()
		fmt.Fprintf(stdout, "rank=%d world=%d device=cuda:%d launcher=%s rays=[%d,%d) vertices=%d\n", env.Rank, env.WorldSize,
			comm.Device(), env.Launcher, t.begin, t.end, len(t.params)/3)
		for step := 1; step <= cfg.steps; step++ {
			loss, err := t.step(ctx)
			if err != nil {
				return fmt.Errorf("step %d: %w", step, err)
			}
			if step%cfg.checkEvery == 0 || step == cfg.steps {
				if err := t.checkDrift(ctx); err != nil {
					return fmt.Errorf("step %d: %w", step, err)
				}
				fmt.Fprintf(stdout, "rank=%d step=%d loss=%.8e drift=0\n", env.Rank, step, loss)
			}
		}
		fmt.Fprintf(stdout, "rank=%d final_param_sha256=%s\n", env.Rank, paramHash(t.params))
		return comm.Barrier(ctx) // the closing barrier: every rank finished
	})
}
