// Package dist runs rayd-go one process per GPU, on one node or many: the
// rank's placement from the launcher users already have, a rendezvous that
// hands every rank rank 0's NCCL unique id, an NCCL communicator for
// all-reduces of device buffers, and a minimal single-node launcher.
//
// RayD itself holds no communicator and launches no collectives: a
// distributed job builds one rank-local Scene per process, shards its rays
// (ShardBounds) or Monte-Carlo lanes (LaneWindow) by rank, and reduces only
// gradients and grids with Comm.AllReduce. Per-step traffic is therefore
// scene-sized, independent of the ray count.
//
// # Launchers
//
// ParseEnv understands torchrun (torchrun --no-python prog), rayd launch
// (Launch), srun (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, the first host
// of the node list) and Open MPI's mpirun (OMPI_COMM_WORLD_*), and RANK /
// WORLD_SIZE / LOCAL_RANK / MASTER_ADDR / MASTER_PORT exported by hand. RANK
// and WORLD_SIZE are global; LOCAL_RANK is node-local and picks the GPU
// (DeviceFor). Multi-node runs change only the launcher's rendezvous
// arguments, never the program.
//
// # Rendezvous and failure handling
//
// Join meets all ranks at MASTER_ADDR:MASTER_PORT (MASTER_PORT+1 under
// torchrun, whose agent already serves a store there; RAYD_RDZV_PORT
// overrides both) within an explicit timeout: a rank that never arrives is
// an ErrTimeout naming it, never a hang. NCCL's own bootstrap does the rest.
// The rendezvous connections stay open as a watchdog: a rank that dies or
// aborts fails every other rank's Session at once, and Comm aborts its
// NCCL communicator and returns an error matching ErrPeerLost. Without the
// watchdog (a stalled but connected peer), every collective polls the
// stream, ncclCommGetAsyncError and its deadline, and aborts the
// communicator when the deadline passes (ErrTimeout).
//
// Every exit path releases the communicator: Close destroys it after a
// final Barrier, Abort (the error path) aborts it and tells the peers.
//
// # Process rules
//
// PrepareProcess (called by Init) keeps NCCL_NVLS_ENABLE=0 and gives each
// rank a private OPTIX_CACHE_PATH (<root>/rank-<RANK>) unless one is set.
//
// Place in the graph: dist sits beside shard and calibrate, above accel,
// launch and driver (its NCCL calls go through driver's purego binding).
package dist
