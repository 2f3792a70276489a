package dist

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// LaunchConfig describes a single-node job for Launch: NProcs copies of
// Program, one per GPU.
type LaunchConfig struct {
	NProcs  int
	Program string
	Args    []string
	// MasterAddr defaults to 127.0.0.1; MasterPort 0 picks a free port.
	MasterAddr string
	MasterPort int
	// Env is the base environment of every rank (nil: os.Environ()).
	// Launcher variables inherited from an outer launcher are dropped.
	Env []string
	// Stdout and Stderr receive every rank's output, whole lines at a time
	// (nil: os.Stdout and os.Stderr). Prefix tags each line "[rank R] ".
	Stdout, Stderr io.Writer
	Prefix         bool
	// Grace is how long the other ranks get to exit after SIGTERM once a
	// rank has failed or the launch is cancelled, before SIGKILL (default
	// 10 s).
	Grace time.Duration
	// Token, when set, is exported to every rank as RAYD_RENDEZVOUS_TOKEN,
	// in place of an inherited RAYD_RENDEZVOUS_TOKEN or
	// RAYD_RENDEZVOUS_TOKEN_FILE (`rayd launch` passes NewToken() unless
	// its environment names a token). Empty: the ranks keep what Env holds,
	// and rendezvous without a token when it holds none.
	Token Token
}

// LaunchResult reports how every rank ended.
type LaunchResult struct {
	// ExitCodes holds each rank's exit status (128+signal when killed).
	ExitCodes []int
	// FirstFailure is the first rank that failed on its own (-1: none).
	FirstFailure int
}

// launcherVars are dropped from the inherited environment: the launch sets
// its own, and a stale outer launcher's would mislead ParseEnv.
var launcherVars = []string{"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK",
	"GROUP_WORLD_SIZE", "ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "RAYD_LAUNCHER", "RAYD_RUN_ID", "RAYD_RDZV_PORT",
	"TORCHELASTIC_", "OMPI_COMM_WORLD_", EnvNVLS}

// RankEnv is the environment of rank `rank` of a Launch: base minus
// inherited launcher variables, plus RANK, LOCAL_RANK, WORLD_SIZE,
// LOCAL_WORLD_SIZE, GROUP_RANK=0, MASTER_ADDR, MASTER_PORT, RAYD_LAUNCHER,
// RAYD_RUN_ID and NCCL_NVLS_ENABLE=0.
func RankEnv(base []string, rank, nprocs int, addr string, port int, runID string) []string {
	env := make([]string, 0, len(base)+11)
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, v := range launcherVars {
			if name == v || (strings.HasSuffix(v, "_") && strings.HasPrefix(name, v)) {
				drop = true
			}
		}
		if !drop {
			env = append(env, kv)
		}
	}
	n := strconv.Itoa(nprocs)
	return append(env, "RANK="+strconv.Itoa(rank), "LOCAL_RANK="+strconv.Itoa(rank), "WORLD_SIZE="+n,
		"LOCAL_WORLD_SIZE="+n, "GROUP_RANK=0", "MASTER_ADDR="+addr, "MASTER_PORT="+strconv.Itoa(port),
		"RAYD_LAUNCHER="+string(LauncherRayd), "RAYD_RUN_ID="+runID, EnvNVLS+"=0")
}

// withToken replaces env's token variables with RAYD_RENDEZVOUS_TOKEN=tok
// (env itself when tok is empty).
func withToken(env []string, tok Token) []string {
	if tok == "" {
		return env
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); name != EnvToken && name != EnvTokenFile {
			out = append(out, kv)
		}
	}
	return append(out, EnvToken+"="+string(tok))
}

// FreePort returns a TCP port that was free on host a moment ago.
func FreePort(host string) (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Launch runs cfg.NProcs copies of cfg.Program on this node with the
// variables of RankEnv (what torchrun --standalone --no-python would set)
// and waits for all of them. When one rank fails, or ctx ends, the others
// get SIGTERM and, after the grace period, SIGKILL. The error is nil only
// when every rank exited 0.
func Launch(ctx context.Context, cfg LaunchConfig) (LaunchResult, error) {
	res := LaunchResult{FirstFailure: -1}
	if cfg.NProcs < 1 || cfg.Program == "" {
		return res, fmt.Errorf("dist: Launch: need a program and at least one process (got %d)", cfg.NProcs)
	}
	if cfg.MasterAddr == "" {
		cfg.MasterAddr = "127.0.0.1"
	}
	if cfg.MasterPort == 0 {
		p, err := FreePort(cfg.MasterAddr)
		if err != nil {
			return res, fmt.Errorf("dist: Launch: choosing MASTER_PORT: %w", err)
		}
		cfg.MasterPort = p
	}
	if cfg.Env == nil {
		cfg.Env = os.Environ()
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 10 * time.Second
	}
	if err := cfg.Token.check(); err != nil {
		return res, err
	}
	stdout, stderr := &lineWriter{w: orStd(cfg.Stdout, os.Stdout)}, &lineWriter{w: orStd(cfg.Stderr, os.Stderr)}
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	runID := hex.EncodeToString(id)

	cmds := make([]*exec.Cmd, cfg.NProcs)
	res.ExitCodes = make([]int, cfg.NProcs)
	type exit struct {
		rank int
		err  error
	}
	exits := make(chan exit, cfg.NProcs)
	var outs []*rankOutput
	for r := range cfg.NProcs {
		cmd := exec.Command(cfg.Program, cfg.Args...)
		cmd.Env = withToken(RankEnv(cfg.Env, r, cfg.NProcs, cfg.MasterAddr, cfg.MasterPort, runID), cfg.Token)
		prefix := ""
		if cfg.Prefix {
			prefix = fmt.Sprintf("[rank %d] ", r)
		}
		o, e := &rankOutput{lw: stdout, prefix: prefix}, &rankOutput{lw: stderr, prefix: prefix}
		outs = append(outs, o, e)
		cmd.Stdout, cmd.Stderr = o, e
		if err := cmd.Start(); err != nil {
			for _, c := range cmds[:r] {
				_ = c.Process.Kill()
			}
			for _, c := range cmds[:r] {
				_ = c.Wait()
			}
			return res, fmt.Errorf("dist: Launch: starting rank %d: %w", r, err)
		}
		cmds[r] = cmd
		go func() { exits <- exit{r, cmd.Wait()} }()
	}
	var (
		stopping bool
		killer   *time.Timer
		cause    error
	)
	stop := func() {
		if stopping {
			return
		}
		stopping = true
		for _, c := range cmds {
			_ = c.Process.Signal(syscall.SIGTERM) // an exited rank just reports an error
		}
		killer = time.AfterFunc(cfg.Grace, func() {
			for _, c := range cmds {
				_ = c.Process.Kill()
			}
		})
	}
	done := ctx.Done()
	for left := cfg.NProcs; left > 0; {
		select {
		case <-done:
			done = nil
			cause = ctx.Err()
			stop()
		case e := <-exits:
			left--
			res.ExitCodes[e.rank] = exitCode(cmds[e.rank], e.err)
			if res.ExitCodes[e.rank] != 0 && !stopping {
				res.FirstFailure = e.rank
				cause = fmt.Errorf("dist: Launch: rank %d exited with status %d", e.rank, res.ExitCodes[e.rank])
				stop()
			}
		}
	}
	if killer != nil {
		killer.Stop()
	}
	for _, o := range outs {
		o.flush()
	}
	return res, cause
}

func orStd(w io.Writer, def *os.File) io.Writer {
	if w == nil {
		return def
	}
	return w
}

// exitCode is a process's exit status, 128+signal when a signal ended it.
func exitCode(cmd *exec.Cmd, err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return 1
	}
	return cmd.ProcessState.ExitCode()
}

// lineWriter serialises whole lines from several ranks onto one writer.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// rankOutput buffers one rank's stream and forwards complete lines.
type rankOutput struct {
	lw     *lineWriter
	prefix string
	mu     sync.Mutex
	buf    []byte
}

func (o *rankOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf = append(o.buf, p...)
	for {
		i := bytes.IndexByte(o.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		o.emit(o.buf[:i+1])
		o.buf = o.buf[i+1:]
	}
}

func (o *rankOutput) emit(line []byte) {
	o.lw.mu.Lock()
	defer o.lw.mu.Unlock()
	_, _ = io.WriteString(o.lw.w, o.prefix)
	_, _ = o.lw.w.Write(line)
}

func (o *rankOutput) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.buf) > 0 {
		o.emit(append(o.buf, '\n'))
		o.buf = nil
	}
}
