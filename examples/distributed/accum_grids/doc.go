// Command accum_grids is the lane-window sharded Monte-Carlo accumulation
// recipe of rayd-go: one process per GPU, each running accum_dfr_direct
// (Scene.AccumDfrDirect) over its own warp-aligned window of one global
// lane space, then one NCCL all-reduce (SUM) of the seven float grids and
// the seven integer counters. Every rank passes the global sample count and
// seed unchanged, so the merged grids are the single-device launch of the
// whole lane space: counters exactly, grids up to float summation order.
//
// The fixture is the accumulation fixture of the multi-device benchmark
// with state 1's edge at (0.2, 0, 0): one triangle, two wedge states, a
// --resolution×--resolution grid on the plane z = 0 over [−1, 1]², λ = 1.
// The lane space is dist.LaneTotal(--samples, WORLD_SIZE) (the smallest
// multiple of 32·WORLD_SIZE not below the request) and rank r runs
// dist.LaneWindow's window.
//
// It must be started by a launcher that sets RANK, WORLD_SIZE and
// LOCAL_RANK (torchrun --no-python, rayd launch, srun, mpirun):
//
//	rayd launch -n 2 ./accum_grids --out grids.json
//	torchrun --nproc_per_node=2 --no-python ./accum_grids --out grids.json
//
// Output, per rank: "rank=R local_power_sum=… merged_power_sum=…
// merged_direct_count=… merged_grid_checksum=…"; rank 0 writes the merged
// grids and counters with total_samples, world_size, seed and resolution to
// --out (JSON). "rank=R FAILED: why" and exit status 1 on any failure (a
// dead peer included, within --timeout); exit status 2 for a usage error.
package main
