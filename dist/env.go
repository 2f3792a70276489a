package dist

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// Launcher names the tool that started a rank.
type Launcher string

// The launcher flavours ParseEnv recognises.
const (
	// LauncherTorchrun: torchrun / torch.distributed.run (TORCHELASTIC_RUN_ID set).
	LauncherTorchrun Launcher = "torchrun"
	// LauncherRayd: rayd launch (RAYD_LAUNCHER=rayd).
	LauncherRayd Launcher = "rayd"
	// LauncherEnv: RANK and WORLD_SIZE exported by hand or by another tool.
	LauncherEnv Launcher = "env"
	// LauncherSLURM: srun (SLURM_PROCID, SLURM_NTASKS).
	LauncherSLURM Launcher = "slurm"
	// LauncherOpenMPI: mpirun / mpiexec of Open MPI (OMPI_COMM_WORLD_*).
	LauncherOpenMPI Launcher = "openmpi"
)

// DefaultMasterPort is the rendezvous port when the launcher names none
// (torchrun's default).
const DefaultMasterPort = 29500

// ErrNotLaunched reports that no launcher environment was found: the
// process was started directly rather than by torchrun, rayd launch, srun or
// mpirun.
var ErrNotLaunched = errors.New("dist: no launcher environment (expected RANK and WORLD_SIZE, SLURM_PROCID and SLURM_NTASKS, or OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE)")

// EnvError names a launcher variable with an unusable value.
type EnvError struct {
	Var, Value, Reason string
}

func (e *EnvError) Error() string {
	return fmt.Sprintf("dist: %s=%q: %s", e.Var, e.Value, e.Reason)
}

// Env is where one rank stands in a job: its global rank, its rank on its
// node, the sizes, and the rendezvous endpoint. RANK, LOCAL_RANK and
// WORLD_SIZE mean the same for every launcher: RANK is global, LOCAL_RANK is
// node-local (it picks the GPU), WORLD_SIZE counts every rank of the job.
type Env struct {
	Rank, WorldSize           int
	LocalRank, LocalWorldSize int
	MasterAddr                string // host of rank 0's rendezvous
	MasterPort                int    // MASTER_PORT (see RendezvousAddr)
	Launcher                  Launcher
	// RunID identifies the job (TORCHELASTIC_RUN_ID, RAYD_RUN_ID,
	// SLURM_JOB_ID[.SLURM_STEP_ID], OMPI_MCA_orte_ess_jobid); ranks of
	// different jobs refuse each other at the rendezvous. May be empty.
	RunID string
	// AgentStore reports that torchrun's agent holds a TCP store on
	// MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE=True).
	AgentStore bool
	// RendezvousPort overrides the rendezvous port (RAYD_RDZV_PORT); 0 = derived.
	RendezvousPort int
	// Token is the job's rendezvous secret (RAYD_RENDEZVOUS_TOKEN, or the
	// file named by RAYD_RENDEZVOUS_TOKEN_FILE); empty when neither is set.
	Token Token
	// BindAll makes rank 0 listen on every interface
	// (RAYD_RENDEZVOUS_BIND_ALL=1) instead of MasterAddr's.
	BindAll bool
}

// FromEnvironment reads the current process's environment (ParseEnv over
// os.Getenv).
func FromEnvironment() (Env, error) { return ParseEnv(os.Getenv) }

// ParseEnv reads a rank's placement from launcher variables, in this order:
// RANK/WORLD_SIZE (torchrun, rayd launch, or exported by hand), then
// SLURM_PROCID/SLURM_NTASKS, then OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE.
// Explicit MASTER_ADDR, MASTER_PORT and LOCAL_RANK always win over what a
// flavour derives. Every flavour also reads RAYD_RDZV_PORT,
// RAYD_RENDEZVOUS_TOKEN or RAYD_RENDEZVOUS_TOKEN_FILE (the one file ParseEnv
// reads) and RAYD_RENDEZVOUS_BIND_ALL. Without any of them it returns
// ErrNotLaunched; a malformed or inconsistent value is an *EnvError (which
// never holds the token).
func ParseEnv(getenv func(string) string) (Env, error) {
	var e Env
	var err error
	switch {
	case getenv("RANK") != "" || getenv("WORLD_SIZE") != "":
		err = e.fromTorch(getenv)
	case getenv("SLURM_PROCID") != "":
		err = e.fromSLURM(getenv)
	case getenv("OMPI_COMM_WORLD_RANK") != "":
		err = e.fromOpenMPI(getenv)
	default:
		return Env{}, ErrNotLaunched
	}
	if err != nil {
		return Env{}, err
	}
	if e.RendezvousPort, err = optInt(getenv, "RAYD_RDZV_PORT", 0); err != nil {
		return Env{}, err
	}
	if e.Token, err = tokenFromEnv(getenv); err != nil {
		return Env{}, err
	}
	if v := strings.TrimSpace(getenv(EnvBindAll)); v != "" {
		if e.BindAll, err = strconv.ParseBool(v); err != nil {
			return Env{}, &EnvError{Var: EnvBindAll, Value: v, Reason: "not a boolean (1, true, 0, false)"}
		}
	}
	return e, e.validate()
}

func (e *Env) fromTorch(getenv func(string) string) error {
	var err error
	if e.Rank, err = needInt(getenv, "RANK"); err != nil {
		return err
	}
	if e.WorldSize, err = needInt(getenv, "WORLD_SIZE"); err != nil {
		return err
	}
	if e.LocalRank, err = optInt(getenv, "LOCAL_RANK", e.Rank); err != nil {
		return err
	}
	if e.LocalWorldSize, err = optInt(getenv, "LOCAL_WORLD_SIZE", e.WorldSize); err != nil {
		return err
	}
	e.Launcher, e.RunID = LauncherEnv, ""
	switch {
	case getenv("TORCHELASTIC_RUN_ID") != "":
		e.Launcher, e.RunID = LauncherTorchrun, getenv("TORCHELASTIC_RUN_ID")
		e.AgentStore = strings.EqualFold(getenv("TORCHELASTIC_USE_AGENT_STORE"), "true")
	case getenv("RAYD_LAUNCHER") == string(LauncherRayd):
		e.Launcher, e.RunID = LauncherRayd, getenv("RAYD_RUN_ID")
	}
	return e.master(getenv, "127.0.0.1")
}

func (e *Env) fromSLURM(getenv func(string) string) error {
	var err error
	if e.Rank, err = needInt(getenv, "SLURM_PROCID"); err != nil {
		return err
	}
	ntasks := "SLURM_NTASKS"
	if getenv(ntasks) == "" {
		ntasks = "SLURM_NPROCS"
	}
	if e.WorldSize, err = needInt(getenv, ntasks); err != nil {
		return err
	}
	if e.LocalRank, err = optInt(getenv, "SLURM_LOCALID", 0); err != nil {
		return err
	}
	if e.LocalRank, err = optInt(getenv, "LOCAL_RANK", e.LocalRank); err != nil {
		return err
	}
	e.LocalWorldSize = firstCount(getenv("SLURM_TASKS_PER_NODE"))
	if e.LocalWorldSize == 0 {
		e.LocalWorldSize = e.WorldSize
	}
	e.Launcher = LauncherSLURM
	if job := getenv("SLURM_JOB_ID"); job != "" {
		e.RunID = job
		if step := getenv("SLURM_STEP_ID"); step != "" {
			e.RunID += "." + step
		}
	}
	host := FirstHost(getenv("SLURM_STEP_NODELIST"))
	if host == "" {
		host = FirstHost(getenv("SLURM_JOB_NODELIST"))
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if err := e.master(getenv, host); err != nil {
		return err
	}
	if getenv("MASTER_PORT") == "" {
		// A job-specific default, so two jobs sharing a node do not collide.
		if id, err := strconv.Atoi(getenv("SLURM_JOB_ID")); err == nil && id >= 0 {
			e.MasterPort = 15000 + id%10000
		}
	}
	return nil
}

func (e *Env) fromOpenMPI(getenv func(string) string) error {
	var err error
	if e.Rank, err = needInt(getenv, "OMPI_COMM_WORLD_RANK"); err != nil {
		return err
	}
	if e.WorldSize, err = needInt(getenv, "OMPI_COMM_WORLD_SIZE"); err != nil {
		return err
	}
	if e.LocalRank, err = optInt(getenv, "OMPI_COMM_WORLD_LOCAL_RANK", 0); err != nil {
		return err
	}
	if e.LocalRank, err = optInt(getenv, "LOCAL_RANK", e.LocalRank); err != nil {
		return err
	}
	if e.LocalWorldSize, err = optInt(getenv, "OMPI_COMM_WORLD_LOCAL_SIZE", e.WorldSize); err != nil {
		return err
	}
	e.Launcher, e.RunID = LauncherOpenMPI, getenv("OMPI_MCA_orte_ess_jobid")
	if e.RunID == "" {
		e.RunID = getenv("OMPI_MCA_ess_base_jobid")
	}
	if getenv("MASTER_ADDR") == "" && e.LocalWorldSize < e.WorldSize {
		return &EnvError{Var: "MASTER_ADDR", Reason: "an Open MPI job on several nodes needs MASTER_ADDR (mpirun -x MASTER_ADDR=<host of rank 0>)"}
	}
	return e.master(getenv, "127.0.0.1")
}

// master fills MasterAddr and MasterPort from MASTER_ADDR / MASTER_PORT.
func (e *Env) master(getenv func(string) string, defaultHost string) error {
	e.MasterAddr = getenv("MASTER_ADDR")
	if e.MasterAddr == "" {
		e.MasterAddr = defaultHost
	}
	var err error
	e.MasterPort, err = optInt(getenv, "MASTER_PORT", DefaultMasterPort)
	return err
}

func (e *Env) validate() error {
	bad := func(v string, val int, why string) error {
		return &EnvError{Var: v, Value: strconv.Itoa(val), Reason: why}
	}
	switch {
	case e.WorldSize < 1:
		return bad("WORLD_SIZE", e.WorldSize, "must be at least 1")
	case e.Rank < 0 || e.Rank >= e.WorldSize:
		return bad("RANK", e.Rank, fmt.Sprintf("must be in [0, %d)", e.WorldSize))
	case e.LocalWorldSize < 1 || e.LocalWorldSize > e.WorldSize:
		return bad("LOCAL_WORLD_SIZE", e.LocalWorldSize, fmt.Sprintf("must be in [1, %d]", e.WorldSize))
	case e.LocalRank < 0:
		return bad("LOCAL_RANK", e.LocalRank, "must not be negative")
	case e.MasterPort < 1 || e.MasterPort > 65535:
		return bad("MASTER_PORT", e.MasterPort, "must be a TCP port")
	case e.RendezvousPort < 0 || e.RendezvousPort > 65535:
		return bad("RAYD_RDZV_PORT", e.RendezvousPort, "must be a TCP port")
	}
	return nil
}

// RendezvousAddr is host:port of rank 0's rendezvous listener:
// MASTER_ADDR with RAYD_RDZV_PORT when set, else MASTER_PORT — or
// MASTER_PORT+1 under torchrun when its agent already serves a TCP store on
// MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE=True).
func (e Env) RendezvousAddr() string {
	port := e.MasterPort
	switch {
	case e.RendezvousPort != 0:
		port = e.RendezvousPort
	case e.AgentStore:
		port++
	}
	return net.JoinHostPort(e.MasterAddr, strconv.Itoa(port))
}

// Rendezvous is this rank's side of the job's rendezvous: Addr from
// RendezvousAddr, the rank, world size, run id, token and bind choice of
// the environment, and the given timeout and payload (rank 0's).
func (e Env) Rendezvous(timeout time.Duration, payload []byte) RendezvousConfig {
	return RendezvousConfig{Addr: e.RendezvousAddr(), Rank: e.Rank, WorldSize: e.WorldSize, RunID: e.RunID,
		Token: e.Token, BindAll: e.BindAll, Timeout: timeout, Payload: payload}
}

// String renders the placement, e.g. "rank 1/2 (local 1/2, torchrun)".
func (e Env) String() string {
	return fmt.Sprintf("rank %d/%d (local %d/%d, %s)", e.Rank, e.WorldSize, e.LocalRank, e.LocalWorldSize, e.Launcher)
}

func needInt(getenv func(string) string, name string) (int, error) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return 0, &EnvError{Var: name, Reason: "not set"}
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, &EnvError{Var: name, Value: v, Reason: "not an integer"}
	}
	return n, nil
}

func optInt(getenv func(string) string, name string, def int) (int, error) {
	if strings.TrimSpace(getenv(name)) == "" {
		return def, nil
	}
	return needInt(getenv, name)
}

// firstCount reads the first count of a SLURM_TASKS_PER_NODE value such as
// "4(x2),3" (0 when absent or malformed).
func firstCount(v string) int {
	v, _, _ = strings.Cut(v, ",")
	v, _, _ = strings.Cut(v, "(")
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// FirstHost returns the first host of a SLURM hostlist expression, e.g.
// "gpu[07-09,12],cpu1" → "gpu07" and "rack[1-2]-n[3,5]" → "rack1-n3"
// ("" for an empty list).
func FirstHost(list string) string {
	var b strings.Builder
	for i := 0; i < len(list); i++ {
		switch c := list[i]; c {
		case ',':
			return b.String()
		case '[':
			j := i + 1
			for j < len(list) && list[j] != ',' && list[j] != '-' && list[j] != ']' {
				b.WriteByte(list[j])
				j++
			}
			for j < len(list) && list[j] != ']' {
				j++
			}
			i = j
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
