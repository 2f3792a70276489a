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

// launchUsage is the help of `rayd launch`.
const launchUsage = `usage: rayd launch [-n N] [flags] program [args...]

Starts N copies of program on this node, one per GPU, with the variables
torchrun sets (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR,
MASTER_PORT) plus NCCL_NVLS_ENABLE=0, and waits for them. When one rank
fails, the others get SIGTERM and, after the grace period, SIGKILL; the
exit status is the first failing rank's. For several nodes use torchrun,
srun or mpirun: programs built on package dist read their variables too.

The ranks also get a fresh random RAYD_RENDEZVOUS_TOKEN, so that only they
can join their rendezvous; a RAYD_RENDEZVOUS_TOKEN or
RAYD_RENDEZVOUS_TOKEN_FILE already in the environment is passed on instead.

flags:`

// cmdLaunch implements `rayd launch`: 0 when every rank succeeded, the first
// failing rank's status otherwise, 2 for a usage error.
func cmdLaunch(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("launch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 1, "number of ranks (processes, one per GPU)")
	fs.IntVar(n, "nproc-per-node", 1, "alias of -n")
	fs.IntVar(n, "nproc_per_node", 1, "alias of -n (torchrun's spelling)")
	addr := fs.String("master-addr", "127.0.0.1", "MASTER_ADDR given to the ranks")
	port := fs.Int("master-port", 0, "MASTER_PORT given to the ranks (0: a free port)")
	grace := fs.Duration("grace", 10*time.Second, "time the other ranks get after SIGTERM before SIGKILL")
	prefix := fs.Bool("prefix", false, `prefix every output line with "[rank R] "`)
	fs.Usage = func() {
		fmt.Fprintln(stderr, launchUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 || *n < 1 || *port < 0 || *port > 65535 {
		fmt.Fprintln(stderr, "rayd launch: need a program, -n ≥ 1 and a valid --master-port")
		fs.Usage()
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	res, err := dist.Launch(ctx, dist.LaunchConfig{
		NProcs: *n, Program: fs.Arg(0), Args: fs.Args()[1:], MasterAddr: *addr, MasterPort: *port,
		Stdout: stdout, Stderr: stderr, Prefix: *prefix, Grace: *grace, Token: childToken(os.Getenv),
	})
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "rayd launch:", err)
	if res.FirstFailure >= 0 {
		if code := res.ExitCodes[res.FirstFailure]; code > 0 && code < 256 {
			return code
		}
	}
	return 1
}

// childToken is the rendezvous token `rayd launch` gives its ranks: a fresh
// one, or none (the ranks inherit it) when the environment already names a
// token or a token file.
func childToken(getenv func(string) string) dist.Token {
	if getenv(dist.EnvToken) != "" || getenv(dist.EnvTokenFile) != "" {
		return ""
	}
	return dist.NewToken()
}
