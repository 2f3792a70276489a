package dist

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	childEnv    = "RAYD_DIST_TEST_CHILD"
	childDirEnv = "RAYD_DIST_TEST_DIR"
)

// TestMain turns the test binary into a launched rank when childEnv is set.
func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

// child is one rank of a Launch in these tests.
func child(mode string) int {
	env, err := FromEnvironment()
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	switch mode {
	case "env":
		fmt.Printf("rank=%d local=%d world=%d addr=%s nvls=%s launcher=%s\n", env.Rank, env.LocalRank, env.WorldSize,
			env.RendezvousAddr(), os.Getenv(EnvNVLS), env.Launcher)
		fmt.Fprintf(os.Stderr, "partial line from %d", env.Rank) // no newline: flushed at exit
		return 0
	case "gather":
		ctx := context.Background()
		s, err := Join(ctx, env.Rendezvous(60*time.Second, []byte("from-0")))
		if err != nil {
			fmt.Println("join:", err)
			return 1
		}
		parts, err := s.AllGather(ctx, []byte(fmt.Sprint(env.Rank*env.Rank)))
		if err == nil {
			err = s.Barrier(ctx)
		}
		if err != nil {
			fmt.Println("gather:", err)
			return 1
		}
		auth := "none"
		if env.Token != "" {
			auth = "token"
		}
		fmt.Printf("rank=%d payload=%s squares=%s auth=%s launcher=%s\n", env.Rank, s.Payload(), bytes.Join(parts, []byte(",")), auth, env.Launcher)
		return func() int { _ = s.Close(); return 0 }()
	case "fail1":
		if env.Rank == 1 {
			return 3
		}
		time.Sleep(time.Minute)
		return 0
	case "stubborn": // rank 1 ignores SIGTERM, then rank 0 fails
		ready := filepath.Join(os.Getenv(childDirEnv), "ready")
		if env.Rank == 0 {
			for i := 0; i < 1000; i++ {
				if _, err := os.Stat(ready); err == nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			return 4
		}
		signal.Ignore(syscall.SIGTERM)
		_ = os.WriteFile(ready, nil, 0o600)
		time.Sleep(time.Minute)
		return 0
	}
	return 5
}

func launchSelf(t *testing.T, mode string, n int, grace time.Duration) (LaunchResult, string, string, error) {
	t.Helper()
	return launchSelfWith(t, LaunchConfig{NProcs: n, Grace: grace}, mode)
}

// launchSelfWith launches the test binary as cfg.NProcs ranks in mode.
func launchSelfWith(t *testing.T, cfg LaunchConfig, mode string, extraEnv ...string) (LaunchResult, string, string, error) {
	t.Helper()
	var out, errb syncBuffer
	cfg.Env = append(append(os.Environ(), childEnv+"="+mode, childDirEnv+"="+t.TempDir()), extraEnv...)
	cfg.Program, cfg.Stdout, cfg.Stderr = os.Args[0], &out, &errb
	res, err := Launch(context.Background(), cfg)
	return res, out.String(), errb.String(), err
}

func TestLaunchSetsTheLauncherVariables(t *testing.T) {
	t.Setenv("RANK", "7") // an outer launcher's variables must not leak through
	t.Setenv("TORCHELASTIC_RUN_ID", "outer")
	t.Setenv(EnvNVLS, "1")
	res, out, errOut, err := launchSelf(t, "env", 3, 0)
	require.NoError(t, err, out+errOut)
	assert.Equal(t, []int{0, 0, 0}, res.ExitCodes)
	assert.Equal(t, -1, res.FirstFailure)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	sort.Strings(lines)
	require.Len(t, lines, 3, out)
	re := regexp.MustCompile(`^rank=(\d) local=(\d) world=3 addr=127\.0\.0\.1:(\d+) nvls=0 launcher=rayd$`)
	port := ""
	for r, l := range lines {
		m := re.FindStringSubmatch(l)
		require.NotNil(t, m, l)
		assert.Equal(t, fmt.Sprint(r), m[1])
		assert.Equal(t, m[1], m[2])
		if port == "" {
			port = m[3]
		}
		assert.Equal(t, port, m[3], "every rank meets at one port")
	}
	for r := range 3 {
		assert.Contains(t, errOut, fmt.Sprintf("partial line from %d\n", r))
	}
}

func TestLaunchedRanksRendezvous(t *testing.T) {
	for _, tc := range []struct {
		name  string
		token Token    // LaunchConfig.Token
		env   []string // added to the base environment
		auth  string
	}{
		{"no token", "", nil, "none"},
		{"launch token", NewToken(), nil, "token"},
		{"inherited token", "", []string{EnvToken + "=inherited-token-0123456789"}, "token"},
		{"launch token replaces an inherited file", NewToken(), []string{EnvTokenFile + "=/nonexistent/token"}, "token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, out, errOut, err := launchSelfWith(t, LaunchConfig{NProcs: 4, Token: tc.token}, "gather", tc.env...)
			require.NoError(t, err, out+errOut)
			for r := range 4 {
				assert.Contains(t, out, fmt.Sprintf("rank=%d payload=from-0 squares=0,1,4,9 auth=%s launcher=rayd\n", r, tc.auth))
			}
			if tc.token != "" {
				assert.NotContains(t, out+errOut, string(tc.token))
			}
		})
	}
}

// TestTorchrunStyleRanksRendezvous starts ranks with the variables
// torchrun --no-python sets (its agent's store holds MASTER_PORT, so the
// rendezvous uses MASTER_PORT+1), with the token in the environment, in a
// file, or absent.
func TestTorchrunStyleRanksRendezvous(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(NewToken()+"\n"), 0o600))
	for _, tc := range []struct {
		name string
		env  []string
		auth string
	}{
		{"no token", nil, "none"},
		{"token", []string{EnvToken + "=" + string(NewToken())}, "token"},
		{"token file", []string{EnvTokenFile + "=" + tokenFile}, "token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const world = 3
			port := agentStore(t)
			cmds := make([]*exec.Cmd, world)
			outs := make([]syncBuffer, world)
			for r := range world {
				cmd := exec.Command(os.Args[0])
				cmd.Env = append(launcherFree(), childEnv+"=gather", fmt.Sprintf("RANK=%d", r), fmt.Sprintf("LOCAL_RANK=%d", r),
					fmt.Sprintf("WORLD_SIZE=%d", world), fmt.Sprintf("LOCAL_WORLD_SIZE=%d", world), "GROUP_RANK=0",
					"MASTER_ADDR=127.0.0.1", fmt.Sprintf("MASTER_PORT=%d", port), "TORCHELASTIC_RUN_ID=torch-job",
					"TORCHELASTIC_USE_AGENT_STORE=True")
				cmd.Env = append(cmd.Env, tc.env...)
				cmd.Stdout, cmd.Stderr = &outs[r], &outs[r]
				require.NoError(t, cmd.Start())
				cmds[r] = cmd
			}
			for r, cmd := range cmds {
				require.NoError(t, cmd.Wait(), outs[r].String())
				assert.Contains(t, outs[r].String(),
					fmt.Sprintf("rank=%d payload=from-0 squares=0,1,4 auth=%s launcher=torchrun\n", r, tc.auth))
			}
		})
	}
}

// agentStore listens on a port p, as torchrun's agent does, such that p+1
// (the rendezvous port) was free, and returns p.
func agentStore(t *testing.T) int {
	t.Helper()
	for range 50 {
		store, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		port := store.Addr().(*net.TCPAddr).Port
		if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", fmt.Sprint(port+1))); err == nil {
			_ = ln.Close()
			t.Cleanup(func() { _ = store.Close() })
			return port
		}
		_ = store.Close()
	}
	t.Fatal("no pair of free ports")
	return 0
}

// launcherFree is this process's environment without launcher or token
// variables.
func launcherFree() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		drop := name == EnvToken || name == EnvTokenFile || name == childEnv
		for _, v := range launcherVars {
			drop = drop || name == v || (strings.HasSuffix(v, "_") && strings.HasPrefix(name, v))
		}
		if !drop {
			env = append(env, kv)
		}
	}
	return env
}

func TestLaunchStopsTheOthersWhenARankFails(t *testing.T) {
	start := time.Now()
	res, _, _, err := launchSelf(t, "fail1", 3, 5*time.Second)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rank 1 exited with status 3")
	assert.Equal(t, 1, res.FirstFailure)
	assert.Equal(t, 3, res.ExitCodes[1])
	assert.Equal(t, 128+int(syscall.SIGTERM), res.ExitCodes[0])
	assert.Equal(t, 128+int(syscall.SIGTERM), res.ExitCodes[2])
	assert.Less(t, time.Since(start), 20*time.Second)
}

func TestLaunchKillsRanksThatIgnoreSIGTERM(t *testing.T) {
	start := time.Now()
	res, _, _, err := launchSelf(t, "stubborn", 2, 300*time.Millisecond)
	require.Error(t, err)
	assert.Equal(t, 0, res.FirstFailure)
	assert.Equal(t, 4, res.ExitCodes[0])
	assert.Equal(t, 128+int(syscall.SIGKILL), res.ExitCodes[1])
	assert.Less(t, time.Since(start), 20*time.Second)
}

func TestLaunchArguments(t *testing.T) {
	_, err := Launch(context.Background(), LaunchConfig{NProcs: 0, Program: "x"})
	assert.Error(t, err)
	_, err = Launch(context.Background(), LaunchConfig{NProcs: 2, Program: "/nonexistent/program"})
	assert.ErrorContains(t, err, "starting rank 0")
	env := RankEnv([]string{"PATH=/bin", "OMPI_COMM_WORLD_RANK=3", "MASTER_PORT=1", "NCCL_NVLS_ENABLE=1"}, 1, 2, "h", 9, "id")
	assert.Contains(t, env, "PATH=/bin")
	assert.NotContains(t, env, "OMPI_COMM_WORLD_RANK=3")
	assert.NotContains(t, env, "MASTER_PORT=1")
	assert.NotContains(t, env, "NCCL_NVLS_ENABLE=1")
	for _, kv := range []string{"RANK=1", "LOCAL_RANK=1", "WORLD_SIZE=2", "MASTER_ADDR=h", "MASTER_PORT=9", "NCCL_NVLS_ENABLE=0", "RAYD_RUN_ID=id"} {
		assert.Contains(t, env, kv)
	}
}
