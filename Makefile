# rayd-go. `make test` runs everywhere (no GPU needed); the gpu-* targets run
# the GPU tier on a machine with NVIDIA GPUs (see README.md).
GO       ?= go
BIN      := bin
COMMIT   := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
DIRTY    := $(shell test -z "$$(git status --porcelain 2>/dev/null)" && echo false || echo true)
# STAMP links the commit and dirty flag into any binary (internal/buildinfo).
STAMP    := -X github.com/rayd-go/rayd/internal/buildinfo.commit=$(COMMIT) -X github.com/rayd-go/rayd/internal/buildinfo.dirty=$(DIRTY)
LDFLAGS  := -s -w -X main.commit=$(COMMIT)
GPU_PKGS := . ./accel ./launch ./replica ./driver ./dist ./cmd/rayd ./examples/distributed/intersect_train ./examples/distributed/accum_grids
export NCCL_NVLS_ENABLE := 0

.PHONY: all build test lint check ptx ptx-check gpu-bins gpu-accept gpu-accept-run bench-launch bench-geometry bench-edges bench-rf bench-multi bench-sweep gpu-harden clean

all: build test

build:
	CGO_ENABLED=0 $(GO) build ./...

## test: the README's test command: every package, race detector on.
test:
	$(GO) test -race -count=1 ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

check: lint build test ptx-check

## ptx: regenerate every PTX module with nvcc and rewrite ptx/manifest.json.
ptx:
	$(GO) run ./cmd/ptxdigest build

ptx-check:
	$(GO) run ./cmd/ptxdigest check

## gpu-bins: GPU-tier test binaries and tools, CGO_ENABLED=0, for a machine without Go.
gpu-bins:
	@mkdir -p $(BIN)
	@for p in $(GPU_PKGS); do n=$$(echo $$p | sed 's|^\./||; s|/|-|g; s|^\.$$|rayd|'); \
		CGO_ENABLED=0 $(GO) test -c -ldflags "-s -w" -o $(BIN)/$$n.test $$p || exit 1; done
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/gpuaccept ./internal/tools/gpuaccept
	CGO_ENABLED=0 $(GO) build -ldflags "-s -w" -o $(BIN)/launchbench ./benchmarks/launch
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/geometry ./benchmarks/geometry
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/rfbench ./benchmarks/rf
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/edgebench ./benchmarks/edges
	CGO_ENABLED=0 $(GO) build -ldflags "-s -w" -o $(BIN)/allreduce ./benchmarks/dist/allreduce
	CGO_ENABLED=0 $(GO) build -ldflags "-s -w $(STAMP)" -o $(BIN)/rayd ./cmd/rayd
	CGO_ENABLED=0 $(GO) build -ldflags "-s -w" -o $(BIN)/ptxdigest ./cmd/ptxdigest

## gpu-accept: run every GPU-tier suite (nothing may skip) and write tests/evidence/gpu-accept.json.
gpu-accept: gpu-bins gpu-accept-run

gpu-accept-run:
	$(BIN)/gpuaccept -out tests/evidence/gpu-accept.json $(BIN)/*.test

## gpu-harden: the hardening runs on the GPUs (fault sweep, 1,000 create/
## query/close cycles, an 8-goroutine soak over two devices) with evidence
## written to tests/evidence/{fault-sweep,leak-cycles,soak}.json.
gpu-harden:
	RAYD_REQUIRE_GPU=1 RAYD_EVIDENCE_DIR=tests/evidence RAYD_COMMIT=$(COMMIT) \
	RAYD_FAULT_RUNS=60 RAYD_LEAK_CYCLES=1000 RAYD_SOAK_SECONDS=300 \
		$(BIN)/rayd.test -test.run 'GPUFaultSweep|GPULeakCycles|GPUSoak' -test.v -test.timeout 20m

## bench-launch: launch micro-benchmark against the C driver-API baseline.
bench-launch:
	nvcc -O2 -o $(BIN)/launch_native benchmarks/launch/native/launch_native.c -lcuda
	$(BIN)/launchbench -native $(BIN)/launch_native -ptx ptx/basic.ptx -out benchmarks/results/launch.json

## bench-geometry: single-device BVH benchmark (light and compute) -> benchmarks/results/geometry-h200.json.
bench-geometry:
	$(BIN)/geometry -out benchmarks/results/geometry-h200.json

## bench-edges: nearest-edge queries (4,194,304 points, segments, half rays;
## light and compute edges; build time) -> benchmarks/results/edges-h200.json.
bench-edges:
	$(BIN)/edgebench -out benchmarks/results/edges-h200.json | tee benchmarks/results/edges-h200.txt

## bench-rf: RF benchmark -> benchmarks/results/rf-h200.json.
bench-rf:
	$(BIN)/rfbench -out benchmarks/results/rf-h200.json

## bench-multi: `rayd bench` BENCH_RUNS times back to back (a validated JSON
## record and the printed table per run), then the stability summary
## (min/median/max of every row, calibration tallies) and the speedup plot.
BENCH_RUNS ?= 20
BENCH_DIR  ?= benchmarks/results/multidevice-h200x2
bench-multi:
	@mkdir -p $(BENCH_DIR)/runs
	@for i in $$(seq -w 1 $(BENCH_RUNS)); do \
		$(BIN)/rayd bench -quiet -json $(BENCH_DIR)/runs/run-$$i.json > $(BENCH_DIR)/runs/run-$$i.txt || exit 1; done
	$(BIN)/rayd bench summarize -json $(BENCH_DIR)/stability.json -plot $(BENCH_DIR)/speedup.png \
		$(BENCH_DIR)/runs/run-*.json | tee $(BENCH_DIR)/stability.txt

## bench-sweep: batch sweeps for the plot (per_ray rays 2^18, 2^20, 2^24;
## accumulation samples 2^16 .. 2^24), plotted with the runs of bench-multi.
bench-sweep:
	@mkdir -p $(BENCH_DIR)/sweep
	@for n in 262144 1048576 16777216; do \
		$(BIN)/rayd bench -quiet -rays $$n -json $(BENCH_DIR)/sweep/rays-$$n.json > $(BENCH_DIR)/sweep/rays-$$n.txt || exit 1; done
	@for n in 65536 1048576 4194304 16777216; do \
		$(BIN)/rayd bench -quiet -accum-only -accum-samples $$n -json $(BENCH_DIR)/sweep/samples-$$n.json > $(BENCH_DIR)/sweep/samples-$$n.txt || exit 1; done
	$(BIN)/rayd bench summarize -plot $(BENCH_DIR)/speedup-sweep.png $(BENCH_DIR)/sweep/*.json $(BENCH_DIR)/runs/run-01.json > /dev/null

clean:
	rm -rf $(BIN)
