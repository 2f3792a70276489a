"""All-reduce of a [V,3] float32 gradient with torch.distributed (NCCL).

The PyTorch twin of the Go command benchmarks/dist/allreduce: the same
sizes, warm-up, rounds and timing, so the two outputs compare line by line.
Run it as one process per GPU:

    torchrun --nnodes=1 --nproc_per_node=2 benchmarks/dist/allreduce_torch.py

Each round mirrors dist.Comm.MeasureAllReduce: one all-reduce waited for on
the host, one more queued, then --iters back-to-back in-place SUM
all-reduces between two CUDA events on the current stream; the round's
value is the elapsed time divided by --iters. After --warmup untimed rounds
the median over --rounds timed rounds is reported. Rank 0 prints one JSON
line per size with impl, vertices, bytes, median_us, algbw_gbps (bytes per
median second, in 1e9 bytes per second) and busbw_gbps (algbw * 2(W-1)/W).
"""

import argparse
import datetime
import json
import os
import statistics

# NVLink multicast stays off, as in every environment rayd-go builds.
os.environ.setdefault("NCCL_NVLS_ENABLE", "0")

import torch  # noqa: E402  (after the NCCL environment is settled)
import torch.distributed as dist  # noqa: E402

IMPL = "torch-distributed-nccl"
DEFAULT_VERTICES = "16641,262144,2097152"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--vertices", default=DEFAULT_VERTICES,
                   help="comma-separated vertex counts V of the [V,3] float32 gradient")
    p.add_argument("--warmup", type=int, default=5, help="untimed rounds per size")
    p.add_argument("--rounds", type=int, default=25, help="timed rounds per size (the median is reported)")
    p.add_argument("--iters", type=int, default=20, help="back-to-back all-reduces per round")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds any collective may take")
    a = p.parse_args()
    a.vertices = [int(v) for v in a.vertices.split(",")]
    if a.warmup < 0 or a.rounds < 1 or a.iters < 1 or min(a.vertices) < 1:
        p.error("--warmup must be >= 0, --rounds, --iters and every vertex count >= 1")
    return a


def measure_round(buf, iters):
    """Seconds per all-reduce over one round (dist.Comm.MeasureAllReduce)."""
    dist.all_reduce(buf)
    torch.cuda.synchronize()
    dist.all_reduce(buf)
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        dist.all_reduce(buf)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3 / iters


def main():
    args = parse_args()
    if "RANK" not in os.environ:
        raise SystemExit("start one process per GPU: torchrun --nproc_per_node=2 allreduce_torch.py")
    local_rank = int(os.environ.get("LOCAL_RANK", os.environ["RANK"]))
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=args.timeout))
    try:
        world = dist.get_world_size()
        nccl = torch.cuda.nccl.version()
        nccl_code = nccl[0] * 10000 + nccl[1] * 100 + nccl[2] if isinstance(nccl, tuple) else int(nccl)
        for v in args.vertices:
            buf = torch.zeros((v, 3), dtype=torch.float32, device="cuda")
            torch.cuda.synchronize()
            for _ in range(args.warmup):
                measure_round(buf, args.iters)
            secs = [measure_round(buf, args.iters) for _ in range(args.rounds)]
            med = statistics.median(secs)
            nbytes = buf.numel() * buf.element_size()
            algbw = nbytes / med / 1e9 if med > 0 else 0.0
            if dist.get_rank() == 0:
                print(json.dumps({
                    "impl": IMPL, "vertices": v, "bytes": nbytes, "median_us": med * 1e6,
                    "algbw_gbps": algbw, "busbw_gbps": algbw * 2 * (world - 1) / world,
                    "min_us": min(secs) * 1e6, "world_size": world, "warmup": args.warmup,
                    "rounds": args.rounds, "iters": args.iters, "dtype": "float32",
                    "nccl_version": nccl_code, "torch_version": torch.__version__,
                }), flush=True)
            del buf
        dist.barrier()
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
