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
// overrides both; see "Who may join") within an explicit timeout: a rank that never arrives is
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
// # Who may join
//
// The rendezvous hands out the NCCL unique id, and whoever holds it can
// join the communicator, so rank 0 admits only ranks that prove they
// belong to the job:
//
//   - Token. Every rank reads the job's shared secret from
//     RAYD_RENDEZVOUS_TOKEN, or from the file named by
//     RAYD_RENDEZVOUS_TOKEN_FILE (which keeps it out of the environment;
//     white space around it is ignored), at least MinTokenBytes long.
//     `rayd launch` (Launch with LaunchConfig.Token) gives its ranks a
//     fresh random one, unless its environment already names one; under
//     torchrun, srun or mpirun export the same value to every rank (for
//     example RAYD_RENDEZVOUS_TOKEN=$(openssl rand -hex 16)). Rank 0 sends
//     each connection a fresh nonce; the rank answers with HMAC-SHA-256
//     under the token over that nonce, its own nonce, its rank, the world
//     size and the run id, and rank 0 answers with the payload sealed
//     (AES-256-GCM) under a key derived from the token and both nonces.
//     The token never crosses the wire, the NCCL id does not cross it in
//     clear, a recorded hello does not answer another challenge, and a
//     rank accepts no payload from a process that does not hold the
//     token. A rank
//     without the token, with another token, or with one while rank 0 has
//     none is refused (ErrRefused) with a reason that reveals nothing about
//     the job to a stranger. Printing an Env or a RendezvousConfig shows
//     the token as [redacted].
//   - Without a token the rendezvous admits, as before, any connection
//     that names the run id (a job id from the launcher, often guessable)
//     and a free rank; rank 0 then logs one warning (log/slog) when it
//     listens beyond loopback.
//   - Bind. Rank 0 listens on the interface of its configured address
//     (MASTER_ADDR, or the first SLURM host): a loopback name or address,
//     an address of one of its interfaces, or the local addresses a name
//     resolves to. It listens on every interface when that address is not
//     its own (a NAT or container port mapping), when a name resolves only
//     to loopback on rank 0's host (how some distributions resolve the
//     host's own name, while the other nodes reach it on a real
//     interface), or when RAYD_RENDEZVOUS_BIND_ALL=1
//     (RendezvousConfig.BindAll) asks for it.
//   - Before a connection has proved anything, it costs rank 0 little:
//     its first message may hold at most 512 bytes (a hello needs a few
//     hundred), it must arrive within 10 s of the connection, and at most
//     WorldSize+64 connections wait for their hello at once (beyond that
//     the oldest is dropped; a rank reconnects). A connection that is
//     refused or fails never takes a rank's place, so the real rank still
//     gets in while the rendezvous is open.
//
// The protection ends with the rendezvous: NCCL's own bootstrap and
// transports, like torchrun's store, trust the cluster network.
//
// # Process rules
//
// PrepareProcess (called by Init) keeps NCCL_NVLS_ENABLE=0 and gives each
// rank a private OPTIX_CACHE_PATH (<root>/rank-<RANK>) unless one is set.
//
// Place in the graph: dist sits beside shard and calibrate, above accel,
// launch and driver (its NCCL calls go through driver's purego binding).
package dist
