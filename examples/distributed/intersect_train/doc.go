// Command intersect_train is the distributed training recipe of rayd-go: one
// process per GPU, a rank-local scene, a global ray batch sharded by RANK, a
// depth loss through the differentiable intersect, one all-reduce of the
// [V,3] vertex gradient (and of the loss) per step, the same Adam (or SGD)
// step on every rank, a cross-rank drift check every --check-every steps and
// a hash of the final parameters.
//
// It must be started by a launcher that sets RANK, WORLD_SIZE and
// LOCAL_RANK (torchrun --no-python, rayd launch, srun, mpirun):
//
//	rayd launch -n 2 ./intersect_train --steps 24
//	torchrun --nproc_per_node=2 --no-python ./intersect_train --steps 24
//
// Output, per rank: "rank=R step=S loss=L drift=0" at every check and
// "rank=R final_param_sha256=H" at the end; "rank=R FAILED: why" and exit
// status 1 on any failure (a dead peer included, within --timeout); exit
// status 2 for a usage error.
package main
