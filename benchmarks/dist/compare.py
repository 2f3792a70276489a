"""Pairs the JSON lines of allreduce (Go) and allreduce_torch.py by vertex
count and prints, per size, both medians and their ratio as one JSON line.

    python3 benchmarks/dist/compare.py go.jsonl torch.jsonl

Lines that are not JSON objects (launcher chatter) are ignored. ratio is
rayd-go's median over PyTorch's: below 1 means rayd-go's all-reduce is
faster.
"""

import json
import sys


def records(path):
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if "vertices" in r and "median_us" in r:
                out[r["vertices"]] = r
    return out


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: compare.py GO_JSONL TORCH_JSONL")
    go, torch = records(sys.argv[1]), records(sys.argv[2])
    missing = sorted(set(go) ^ set(torch))
    for v in sorted(set(go) & set(torch)):
        g, t = go[v], torch[v]
        print(json.dumps({
            "vertices": v, "bytes": g["bytes"],
            "go_median_us": g["median_us"], "torch_median_us": t["median_us"],
            "go_algbw_gbps": g["algbw_gbps"], "torch_algbw_gbps": t["algbw_gbps"],
            "ratio": g["median_us"] / t["median_us"] if t["median_us"] > 0 else None,
        }))
    if missing or not go:
        raise SystemExit("sizes measured by only one side (or none): %s" % missing)


if __name__ == "__main__":
    main()
