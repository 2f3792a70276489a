// Command allreduce measures rayd-go's NCCL all-reduce (package dist) of a
// [V,3] float32 vertex gradient, the one collective of a distributed
// training step, for V in 16641 (the vertex count of a 128-cell grid),
// 262144 and 2097152. Run it as one process per GPU under any launcher
// that package dist understands:
//
//	rayd launch -n 2 ./allreduce
//	torchrun --nproc_per_node=2 --no-python ./allreduce
//
// Each round is one Comm.MeasureAllReduce: a host-synchronous all-reduce
// and one queued all-reduce as warm-up, then --iters back-to-back in-place
// SUM all-reduces between two CUDA events on the communicator's stream,
// giving the device time per operation. After --warmup untimed rounds the
// median over --rounds timed rounds is reported. Rank 0 prints one JSON
// line per size:
//
//	{"impl":"rayd-go-nccl","vertices":16641,"bytes":199692,"median_us":…,"algbw_gbps":…,…}
//
// algbw_gbps is bytes/median in 10⁹ bytes per second and busbw_gbps scales
// it by 2(W−1)/W (nccl-tests' convention). allreduce_torch.py in the parent
// directory does the same with torch.distributed, so the two outputs
// compare line by line (compare.py prints the ratios).
package main
