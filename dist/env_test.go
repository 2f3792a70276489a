package dist

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func lookup(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestParseEnvFlavours(t *testing.T) {
	cases := []struct {
		name string
		vars map[string]string
		want Env
		addr string
	}{
		{"torchrun", map[string]string{"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2",
			"MASTER_ADDR": "head", "MASTER_PORT": "29500", "TORCHELASTIC_RUN_ID": "job7", "TORCHELASTIC_USE_AGENT_STORE": "True"},
			Env{Rank: 3, WorldSize: 8, LocalRank: 1, LocalWorldSize: 2, MasterAddr: "head", MasterPort: 29500,
				Launcher: LauncherTorchrun, RunID: "job7", AgentStore: true}, "head:29501"},
		{"torchrun without agent store", map[string]string{"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0",
			"MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "4000", "TORCHELASTIC_RUN_ID": "x", "TORCHELASTIC_USE_AGENT_STORE": "False"},
			Env{Rank: 0, WorldSize: 2, LocalRank: 0, LocalWorldSize: 2, MasterAddr: "10.0.0.1", MasterPort: 4000,
				Launcher: LauncherTorchrun, RunID: "x"}, "10.0.0.1:4000"},
		{"rayd launch", map[string]string{"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2",
			"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "31000", "RAYD_LAUNCHER": "rayd", "RAYD_RUN_ID": "abc"},
			Env{Rank: 1, WorldSize: 2, LocalRank: 1, LocalWorldSize: 2, MasterAddr: "127.0.0.1", MasterPort: 31000,
				Launcher: LauncherRayd, RunID: "abc"}, "127.0.0.1:31000"},
		{"by hand, defaults", map[string]string{"RANK": "0", "WORLD_SIZE": "1"},
			Env{Rank: 0, WorldSize: 1, LocalRank: 0, LocalWorldSize: 1, MasterAddr: "127.0.0.1", MasterPort: DefaultMasterPort,
				Launcher: LauncherEnv}, "127.0.0.1:29500"},
		{"rendezvous port override", map[string]string{"RANK": "0", "WORLD_SIZE": "2", "RAYD_RDZV_PORT": "40000",
			"TORCHELASTIC_RUN_ID": "r", "TORCHELASTIC_USE_AGENT_STORE": "True"},
			Env{Rank: 0, WorldSize: 2, LocalWorldSize: 2, MasterAddr: "127.0.0.1", MasterPort: DefaultMasterPort,
				Launcher: LauncherTorchrun, RunID: "r", AgentStore: true, RendezvousPort: 40000}, "127.0.0.1:40000"},
		{"slurm", map[string]string{"SLURM_PROCID": "5", "SLURM_NTASKS": "8", "SLURM_LOCALID": "1",
			"SLURM_TASKS_PER_NODE": "4(x2)", "SLURM_JOB_ID": "123456", "SLURM_STEP_ID": "0",
			"SLURM_JOB_NODELIST": "gpu[07-08]"},
			Env{Rank: 5, WorldSize: 8, LocalRank: 1, LocalWorldSize: 4, MasterAddr: "gpu07", MasterPort: 15000 + 3456,
				Launcher: LauncherSLURM, RunID: "123456.0"}, "gpu07:18456"},
		{"slurm with explicit master and step list", map[string]string{"SLURM_PROCID": "0", "SLURM_NPROCS": "2",
			"SLURM_STEP_NODELIST": "n[3,5]", "SLURM_JOB_NODELIST": "n[1-9]", "MASTER_PORT": "29999", "LOCAL_RANK": "0"},
			Env{Rank: 0, WorldSize: 2, LocalRank: 0, LocalWorldSize: 2, MasterAddr: "n3", MasterPort: 29999,
				Launcher: LauncherSLURM}, "n3:29999"},
		{"open mpi single node", map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2",
			"OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "2", "OMPI_MCA_orte_ess_jobid": "99"},
			Env{Rank: 1, WorldSize: 2, LocalRank: 1, LocalWorldSize: 2, MasterAddr: "127.0.0.1", MasterPort: DefaultMasterPort,
				Launcher: LauncherOpenMPI, RunID: "99"}, "127.0.0.1:29500"},
		{"open mpi two nodes", map[string]string{"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_SIZE": "4",
			"OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "2", "MASTER_ADDR": "node0", "MASTER_PORT": "1234"},
			Env{Rank: 3, WorldSize: 4, LocalRank: 1, LocalWorldSize: 2, MasterAddr: "node0", MasterPort: 1234,
				Launcher: LauncherOpenMPI}, "node0:1234"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseEnv(lookup(tc.vars))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.addr, got.RendezvousAddr())
			assert.Contains(t, got.String(), string(got.Launcher))
		})
	}
}

func TestParseEnvPrecedence(t *testing.T) {
	// RANK (torchrun / rayd launch inside an allocation) wins over SLURM and MPI.
	got, err := ParseEnv(lookup(map[string]string{"RANK": "1", "WORLD_SIZE": "2", "SLURM_PROCID": "0",
		"SLURM_NTASKS": "1", "OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "1"}))
	require.NoError(t, err)
	assert.Equal(t, LauncherEnv, got.Launcher)
	assert.Equal(t, 1, got.Rank)
	// SLURM wins over Open MPI.
	got, err = ParseEnv(lookup(map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "1",
		"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "1"}))
	require.NoError(t, err)
	assert.Equal(t, LauncherSLURM, got.Launcher)
}

func TestParseEnvErrors(t *testing.T) {
	_, err := ParseEnv(lookup(nil))
	assert.ErrorIs(t, err, ErrNotLaunched)
	for name, vars := range map[string]map[string]string{
		"RANK":             {"RANK": "0"},
		"WORLD_SIZE":       {"RANK": "x", "WORLD_SIZE": "2"},
		"rank range":       {"RANK": "2", "WORLD_SIZE": "2"},
		"negative":         {"RANK": "-1", "WORLD_SIZE": "2"},
		"world":            {"RANK": "0", "WORLD_SIZE": "0"},
		"local world":      {"RANK": "0", "WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "3"},
		"local rank":       {"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "-2"},
		"port":             {"RANK": "0", "WORLD_SIZE": "2", "MASTER_PORT": "70000"},
		"port text":        {"RANK": "0", "WORLD_SIZE": "2", "MASTER_PORT": "http"},
		"rdzv port":        {"RANK": "0", "WORLD_SIZE": "2", "RAYD_RDZV_PORT": "-5"},
		"slurm ntasks":     {"SLURM_PROCID": "0"},
		"slurm localid":    {"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_LOCALID": "a"},
		"mpi size":         {"OMPI_COMM_WORLD_RANK": "0"},
		"mpi multi master": {"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_SIZE": "2"},
	} {
		_, err := ParseEnv(lookup(vars))
		var ee *EnvError
		assert.True(t, errors.As(err, &ee), "%s: %v", name, err)
		assert.NotErrorIs(t, err, ErrNotLaunched, name)
	}
}

func TestFirstHost(t *testing.T) {
	for in, want := range map[string]string{
		"":                   "",
		"node1":              "node1",
		"node1,node2":        "node1",
		"gpu[07-09,12],cpu1": "gpu07",
		"gpu[12,07-09]":      "gpu12",
		"rack[1-2]-n[3,5]":   "rack1-n3",
		"a-b[001-004]":       "a-b001",
		"x[5]":               "x5",
	} {
		assert.Equal(t, want, FirstHost(in), in)
	}
	assert.Equal(t, 4, firstCount("4(x2),3"))
	assert.Equal(t, 0, firstCount(""))
}

func TestDeviceFor(t *testing.T) {
	for _, tc := range []struct{ local, visible, want int }{{0, 2, 0}, {1, 2, 1}, {1, 1, 0}, {3, 1, 0}, {7, 8, 7}} {
		got, err := DeviceFor(tc.local, tc.visible)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "%+v", tc)
	}
	_, err := DeviceFor(2, 2)
	assert.Error(t, err)
	_, err = DeviceFor(0, 0)
	assert.Error(t, err)
}

func TestPrepareProcess(t *testing.T) {
	root := t.TempDir()
	t.Setenv(EnvOptiXCachePath, "")
	t.Setenv(EnvNVLS, "")
	p, err := PrepareProcess(Env{Rank: 3}, root)
	require.NoError(t, err)
	assert.Equal(t, "0", os.Getenv(EnvNVLS))
	assert.Equal(t, root+"/rank-3", p)
	assert.DirExists(t, p)
	t.Setenv(EnvOptiXCachePath, "/custom/cache")
	p, err = PrepareProcess(Env{Rank: 1}, root)
	require.NoError(t, err)
	assert.Equal(t, "/custom/cache", p, "an explicit OPTIX_CACHE_PATH is kept")
}

func TestParseEnvRendezvousOptions(t *testing.T) {
	vars := map[string]string{"RANK": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "head", "MASTER_PORT": "4000",
		"RAYD_LAUNCHER": "rayd", "RAYD_RUN_ID": "run", EnvToken: "token-of-the-job-0123", EnvBindAll: "1"}
	e, err := ParseEnv(lookup(vars))
	require.NoError(t, err)
	assert.True(t, e.BindAll)
	cfg := e.Rendezvous(3*time.Second, []byte("p"))
	assert.Equal(t, RendezvousConfig{Addr: "head:4000", Rank: 1, WorldSize: 2, RunID: "run", Token: "token-of-the-job-0123",
		BindAll: true, Timeout: 3 * time.Second, Payload: []byte("p")}, cfg)
	for v, want := range map[string]bool{"0": false, "false": false, "true": true, "": false} {
		vars[EnvBindAll] = v
		e, err := ParseEnv(lookup(vars))
		require.NoError(t, err, v)
		assert.Equal(t, want, e.BindAll, v)
	}
	vars[EnvBindAll] = "everywhere"
	_, err = ParseEnv(lookup(vars))
	var ee *EnvError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, EnvBindAll, ee.Var)
}
