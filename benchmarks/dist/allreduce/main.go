package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rayd-go/rayd/dist"
	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/launch"
)

// impl names this implementation in the records.
const impl = "rayd-go-nccl"

// defaultVertices are the gradient sizes measured by default: the 128-cell
// grid's 129² vertices, 2¹⁸ and 2²¹.
const defaultVertices = "16641,262144,2097152"

type config struct {
	vertices              []int
	warmup, rounds, iters int
	timeout               time.Duration
}

// record is one JSON line of the report.
type record struct {
	Impl        string  `json:"impl"`
	Vertices    int     `json:"vertices"`
	Bytes       int64   `json:"bytes"`
	MedianUS    float64 `json:"median_us"`
	AlgBWGBps   float64 `json:"algbw_gbps"`
	BusBWGBps   float64 `json:"busbw_gbps"`
	MinUS       float64 `json:"min_us"`
	WorldSize   int     `json:"world_size"`
	Warmup      int     `json:"warmup"`
	Rounds      int     `json:"rounds"`
	Iters       int     `json:"iters"`
	Dtype       string  `json:"dtype"`
	NCCLVersion int     `json:"nccl_version"`
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func parseVertices(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 || v > (1<<31-1)/3 {
			return nil, fmt.Errorf("--vertices: %q is not a vertex count in [1, %d]", f, (1<<31-1)/3)
		}
		out = append(out, v)
	}
	return out, nil
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("allreduce", flag.ContinueOnError)
	fs.SetOutput(stderr)
	vertices := fs.String("vertices", defaultVertices, "comma-separated vertex counts V of the [V,3] float32 gradient")
	fs.IntVar(&c.warmup, "warmup", 5, "untimed rounds per size")
	fs.IntVar(&c.rounds, "rounds", 25, "timed rounds per size (the median is reported)")
	fs.IntVar(&c.iters, "iters", 20, "back-to-back all-reduces per round")
	fs.DurationVar(&c.timeout, "timeout", 600*time.Second, "time any collective or the rendezvous may take")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: rayd launch -n 2 allreduce [flags]\n       torchrun --nproc_per_node=2 --no-python allreduce [flags]\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	var err error
	if c.vertices, err = parseVertices(*vertices); err != nil {
		return c, err
	}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	case c.warmup < 0 || c.rounds < 1 || c.iters < 1:
		return c, errors.New("--warmup must be ≥ 0, --rounds and --iters ≥ 1")
	case c.timeout <= 0:
		return c, errors.New("--timeout must be positive")
	}
	return c, nil
}

// run is main without the exit: 0 on success, 1 on failure, 2 on usage.
func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "allreduce:", err)
		return 2
	}
	env, err := dist.FromEnvironment()
	if err != nil {
		fmt.Fprintln(stderr, "allreduce:", err)
		fmt.Fprintln(stderr, "start one process per GPU: rayd launch -n 2 allreduce, or torchrun --nproc_per_node=2 --no-python allreduce")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := bench(ctx, env, cfg, stdout); err != nil {
		fmt.Fprintf(stderr, "rank=%d FAILED: %v\n", env.Rank, err)
		return 1
	}
	return 0
}

// median returns the median of v (the mean of the middle two for an even
// count); v is sorted in place.
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// bench runs every size on this rank's communicator; rank 0 prints the
// records.
func bench(ctx context.Context, env dist.Env, cfg config, stdout io.Writer) (err error) {
	comm, err := dist.Init(ctx, env, dist.Options{Timeout: cfg.timeout})
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			comm.Abort(err.Error())
		}
		if cerr := comm.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("closing the communicator: %w", cerr)
		}
	}()
	version, err := driver.NCCLVersion()
	if err != nil {
		return err
	}
	dev, err := launch.Open(comm.Device())
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, dev.Close()) }()
	s, err := dev.NewStream()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	enc := json.NewEncoder(stdout)
	for _, v := range cfg.vertices {
		rec, err := measure(ctx, comm, dev, s, cfg, v)
		if err != nil {
			return fmt.Errorf("V=%d: %w", v, err)
		}
		rec.NCCLVersion = version
		if env.Rank == 0 {
			if err := enc.Encode(rec); err != nil {
				return err
			}
		}
	}
	return comm.Barrier(ctx)
}

// measure times the all-reduce of a zeroed [v,3] float32 buffer.
func measure(ctx context.Context, comm *dist.Comm, dev *launch.Device, s *launch.Stream, cfg config, v int) (_ record, err error) {
	buf, err := launch.Alloc[float32](dev, 3*v)
	if err != nil {
		return record{}, err
	}
	defer func() { err = errors.Join(err, buf.Close()) }()
	if err := buf.Memset32(s, 0); err != nil {
		return record{}, err
	}
	if err := s.Synchronize(); err != nil {
		return record{}, err
	}
	for range cfg.warmup {
		if _, err := comm.MeasureAllReduce(ctx, buf, cfg.iters); err != nil {
			return record{}, err
		}
	}
	secs := make([]float64, cfg.rounds)
	var bytes int64
	for r := range secs {
		t, err := comm.MeasureAllReduce(ctx, buf, cfg.iters)
		if err != nil {
			return record{}, err
		}
		secs[r], bytes = t.Seconds, t.Bytes
	}
	med := median(secs)
	rec := record{Impl: impl, Vertices: v, Bytes: bytes, MedianUS: med * 1e6, MinUS: secs[0] * 1e6,
		WorldSize: comm.WorldSize(), Warmup: cfg.warmup, Rounds: cfg.rounds, Iters: cfg.iters, Dtype: "float32"}
	if med > 0 {
		rec.AlgBWGBps = float64(bytes) / med / 1e9
		rec.BusBWGBps = rec.AlgBWGBps * 2 * float64(comm.WorldSize()-1) / float64(comm.WorldSize())
	}
	return rec, nil
}
