// Package calibrate measures how to split an operation across the devices
// of a multi-device layer (RayD's calibrate_devices, multidevice spec §8)
// and stores the answer under that operation's exact key.
//
// Calibrate orchestrates and decides; it never reads a clock for a
// measurement. A Probe runs the workload and times it: on GPUs with CUDA
// events, in tests on a model or a simulated cluster. Stage 1 (throughput)
// times the probe on every replica alone, with its inputs resident, device
// by device in each round, and makes the weights inversely proportional to
// each device's fastest time. Stage 2 (refinement) times the real
// multi-device dispatch while scaling every remote weight through the
// ladder 1, 1/2, 1/4, 1/10, 0 (Shares, Ladder); the last rung is the
// master alone. The chosen weights are stored with
// shard.Layer.SetOperationWeights: every other operation keeps its split,
// and the weights survive a rebuild of the replicas.
//
// Two modes decide stage 2. ModeRayD is RayD's rule, kept for comparison:
// each rung's minimum over a few rounds, and the largest remote share
// within 3% of the fastest rung. Near the transfer/compute crossover that
// rule is a coin flip: a split measured a little slower than the master
// alone is kept whenever the noise lands it inside the 3% band, and ships
// a workload that runs slower than one device. ModeNoiseAware (the
// default) times each open rung next to a fresh master-only run, the pair
// order alternating, and reads every rung against the master alone with a
// distribution-free confidence interval on the ratio of their times
// (Hodges–Lehmann, from the Mann–Whitney statistic, on log times). A rung
// whose interval lies above 1 is closed; rounds repeat until no comparison
// that could change the answer is undecided, or until MaxRounds or
// MaxProbeTime. Only a rung measured faster than the master alone with that
// confidence may be shipped (RayD's tie-break then picks among those);
// otherwise the answer is the master alone, and a best sharded rung still
// undecided is reported as NEAR-CROSSOVER.
//
// Identical devices (equal Options.Identities) whose stage-1 times disagree
// by more than ContentionTolerance are re-measured in ModeNoiseAware; what
// still disagrees is reported as CONTENDED (Record.Contention), in both
// modes. Record.String prints RayD's describe() lines — per-device probe
// times, the full ladder with times and the chosen rung — then the margin
// to the master alone, the comparisons and the warnings; Record is also
// JSON with RayD's field names. Options.Progress, when set, is told every
// probe run (ProgressUpdate: done, planned total, stage) for a command to
// render; the package itself draws nothing.
//
// The strength of the claim (§8.6) is unchanged in kind: calibration is a
// measurement of a machine that may be shared. ModeRayD never knowingly
// keeps a split measured more than 3% slower than the master alone, and
// inside that band it is a coin flip. ModeNoiseAware keeps a split only
// when it measured the split faster than the master alone beyond the
// run-to-run spread it observed, at the configured confidence; a neighbour
// that arrives after calibration, or a bias common to every measured run,
// is beyond what it can see. Calibrate at the batch size you will run, on
// a quiet machine, log and pin the weights, and pin the master alone
// where NEAR-CROSSOVER is printed.
//
// Place in the package graph: calibrate sits beside shard, not above it. It
// imports geom and the standard library only (no terminal or progress-bar
// package), never shard, driver, launch or accel, and is pure Go; it stores through
// the Layer interface, which *shard.Layer implements. The public package
// passes its layer, implements the built-in probe on CUDA replicas and
// marks it with BuiltIn.
package calibrate
