# rayd-go. `make test` runs everywhere (no GPU needed); the gpu-* targets run
# the GPU tier on a machine with NVIDIA GPUs (see README.md).
GO       ?= go
BIN      := bin
COMMIT   := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
DIRTY    := $(shell test -z "$$(git status --porcelain 2>/dev/null)" && echo false || echo true)
# STAMP links the commit and dirty flag into any binary (internal/buildinfo).
STAMP    := -X github.com/rayd-go/rayd/internal/buildinfo.commit=$(COMMIT) -X github.com/rayd-go/rayd/internal/buildinfo.dirty=$(DIRTY)
GO_LDFLAGS := -s -w $(STAMP)
GPU_PKGS := . ./accel ./launch ./replica ./driver ./dist ./cmd/rayd ./examples/distributed/intersect_train ./examples/distributed/accum_grids ./benchmarks/dist/allreduce ./benchmarks/coldstart
export NCCL_NVLS_ENABLE := 0

# Where the GPU runs write: by default the committed paths. On a machine
# that returns only some folders, point them elsewhere, or set EVIDENCE_TAR
# to pack what gpu-evidence-run wrote (repository-relative paths) into one
# archive to unpack at the repository root.
EVIDENCE_DIR ?= tests/evidence
RESULTS_DIR  ?= benchmarks/results
EVIDENCE_LOG ?= $(BIN)/evidence-logs
EVIDENCE_TAR ?=
LAUNCH_RUNS  ?= 5
COLDSTART_RUNS ?= 5

.PHONY: all build test lint check ptx ptx-check gpu-bins gpu-pack gpu-accept gpu-accept-run gpu-accept-jit-run gpu-census gpu-evidence-run gpu-replicated \
	evidence-status bench-coldstart bench-launch bench-overhead bench-geometry bench-light-sweep bench-crossings bench-instances bench-tlas-build bench-edges bench-edges-kernels bench-edges-full-point bench-edges-full-rays bench-closest bench-rf profile-rf \
	bench-multi bench-sweep gpu-harden clean edgebench-base bench-edges-point-ab edges-point-ab-summary profile-edges-point \
	bench-edges-light-rays-ab edges-light-rays-ab-summary

all: build test

build:
	CGO_ENABLED=0 $(GO) build ./...

## test: the README's test command: every package, race detector on.
test:
	$(GO) test -race -count=1 -ldflags "$(STAMP)" ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

check: lint build test ptx-check evidence-status

## ptx: regenerate every module with nvcc in one run: its PTX and, for every
## CUDA (non-OptiX) module, one gzip-compressed cubin per architecture
## (PTX_ARCHS) under ptx/cubin/, then rewrite ptx/manifest.json.
## `go run ./cmd/ptxdigest build -module NAME` rebuilds one module.
PTX_ARCHS ?= sm_80,sm_86,sm_89,sm_90
ptx:
	$(GO) run ./cmd/ptxdigest build -archs $(PTX_ARCHS)

## ptx-check: every PTX and cubin against the manifest's digests (no nvcc).
ptx-check:
	$(GO) run ./cmd/ptxdigest check

## evidence-status: for every committed evidence file, its commit, the
## GPU-code commits since, and whether its PTX digests equal HEAD's (no GPU).
evidence-status:
	$(GO) run ./internal/tools/evidencestatus

## gpu-bins: GPU-tier test binaries and tools, CGO_ENABLED=0, for a machine
## without Go; every one stamped with the commit and dirty flag.
gpu-bins:
	@mkdir -p $(BIN)
	@rm -f $(BIN)/*.test
	@for p in $(GPU_PKGS); do n=$$(echo $$p | sed 's|^\./||; s|/|-|g; s|^\.$$|rayd|'); \
		echo "test -c $$p -> $(BIN)/$$n.test"; \
		CGO_ENABLED=0 $(GO) test -c -ldflags "$(GO_LDFLAGS)" -o $(BIN)/$$n.test $$p || exit 1; done
	CGO_ENABLED=0 $(GO) build -ldflags "$(GO_LDFLAGS)" -o $(BIN)/gpuaccept ./internal/tools/gpuaccept
	CGO_ENABLED=0 $(GO) build -ldflags "$(GO_LDFLAGS)" -o $(BIN)/launchbench ./benchmarks/launch
	CGO_ENABLED=0 $(GO) build -ldflags "$(GO_LDFLAGS)" -o $(BIN)/coldstart ./benchmarks/coldstart
	CGO_ENABLED=0 $(GO) build -ldflags "$(GO_LDFLAGS)" -o $(BIN)/geometry ./benchmarks/geometry
	CGO_ENABLED=0 $(GO) build -ldflags "$(GO_LDFLAGS)" -o $(BIN)/crossings ./benchmarks/crossings
	CGO_ENABLED=0 $(GO) build -ldflags "$(GO_LDFLAGS)" -o $(BIN)/instancebench ./benchmarks/instances
	CGO_ENABLED=0 $(GO) build -ldflags "$(GO_LDFLAGS)" -o $(BIN)/rfbench ./benchmarks/rf
	CGO_ENABLED=0 $(GO) build -ldflags "$(GO_LDFLAGS)" -o $(BIN)/edgebench ./benchmarks/edges
	CGO_ENABLED=0 $(GO) build -ldflags "$(GO_LDFLAGS)" -o $(BIN)/closestbench ./benchmarks/closest
	CGO_ENABLED=0 $(GO) build -ldflags "$(GO_LDFLAGS)" -o $(BIN)/replicated ./benchmarks/replicated
	CGO_ENABLED=0 $(GO) build -ldflags "$(GO_LDFLAGS)" -o $(BIN)/overhead ./benchmarks/overhead
	CGO_ENABLED=0 $(GO) build -ldflags "$(GO_LDFLAGS)" -o $(BIN)/allreduce ./benchmarks/dist/allreduce
	CGO_ENABLED=0 $(GO) build -ldflags "$(GO_LDFLAGS)" -o $(BIN)/rayd ./cmd/rayd
	CGO_ENABLED=0 $(GO) build -ldflags "$(GO_LDFLAGS)" -o $(BIN)/ptxdigest ./cmd/ptxdigest
	CGO_ENABLED=0 $(GO) build -ldflags "$(GO_LDFLAGS)" -o $(BIN)/benchrecord ./internal/tools/benchrecord
	@echo "gpu-bins: stamped $(COMMIT) dirty=$(DIRTY)"

## gpu-pack: what gpu-evidence-run needs (the test binaries, gpuaccept and
## the benchmarks), in one archive to carry to a GPU machine that has no
## Go; gpu-evidence-run unpacks it into $(BIN) there.
GPU_PACK      ?= $(BIN)/gpu-pack.tar.gz
GPU_PACK_BINS := gpuaccept launchbench coldstart geometry crossings instancebench rfbench edgebench closestbench replicated overhead rayd benchrecord
gpu-pack: gpu-bins
	tar czf $(GPU_PACK).tmp -C $(BIN) $(GPU_PACK_BINS) $$(cd $(BIN) && ls *.test) && mv $(GPU_PACK).tmp $(GPU_PACK)
	@ls -l $(GPU_PACK)

## gpu-accept: run every GPU-tier suite and write tests/evidence/gpu-accept.json:
## every test by name; nothing may fail or skip; tests needing more devices
## than the machine has are deferred; each suite holds its listed minimum
## of GPU-gated tests (internal/tools/gpuaccept/suites.json).
gpu-accept: gpu-bins gpu-accept-run

gpu-accept-run:
	$(BIN)/gpuaccept -out $(EVIDENCE_DIR)/gpu-accept.json $(BIN)/*.test

## gpu-accept-jit-run: the same suites with RAYD_PTX_JIT=1, every module
## JIT-compiled from its PTX instead of loaded from its cubin ->
## $(EVIDENCE_DIR)/gpu-accept-jit.json (its header says ptx_jit_forced).
gpu-accept-jit-run:
	RAYD_PTX_JIT=1 $(BIN)/gpuaccept -out $(EVIDENCE_DIR)/gpu-accept-jit.json $(BIN)/*.test

## gpu-census: count the GPU-gated tests of every suite (any machine) and
## print the suite list to commit as internal/tools/gpuaccept/suites.json.
gpu-census:
	$(BIN)/gpuaccept -census $(BIN)/*.test

## gpu-evidence-run: on the GPU machine (after make gpu-bins or gpu-pack; Go
## is not needed there, nvcc is for bench-launch): gpu-accept-run,
## gpu-accept-jit-run, gpu-replicated, bench-overhead, bench-geometry, bench-crossings,
## bench-edges, bench-edges-kernels, bench-rf, profile-rf, bench-launch and bench-coldstart from the binaries
## in bin/, each logged to $(EVIDENCE_LOG)/<step>.log. Every step runs even
## when one fails; the target fails when any did. EVIDENCE_TAR=path packs the
## files written (and the logs) into one tar.gz, to unpack at the repository
## root.
EVIDENCE_STEPS ?= gpu-accept-run gpu-accept-jit-run gpu-replicated bench-overhead bench-geometry bench-crossings bench-closest bench-instances bench-tlas-build bench-edges bench-edges-kernels bench-rf profile-rf bench-launch bench-coldstart
EVIDENCE_FILES  = $(EVIDENCE_DIR)/gpu-accept.json $(EVIDENCE_DIR)/gpu-accept-jit.json $(EVIDENCE_DIR)/replicated-1gpu.json \
	$(RESULTS_DIR)/overhead-1gpu.json $(RESULTS_DIR)/coldstart-h200.json $(RESULTS_DIR)/geometry-h200.json $(RESULTS_DIR)/crossings-h200.json $(RESULTS_DIR)/closest-h200.json $(RESULTS_DIR)/closest-h200.txt \
	$(RESULTS_DIR)/instances-h200.json $(RESULTS_DIR)/tlas-build-h200.json $(RESULTS_DIR)/tlas-build-h200.txt $(RESULTS_DIR)/geometry-light-sweep-h200.json $(RESULTS_DIR)/edges-h200.json \
	$(RESULTS_DIR)/edges-h200.txt $(RESULTS_DIR)/edges-h200-kernels.json $(RESULTS_DIR)/edges-h200-kernels.txt \
	$(RESULTS_DIR)/rf-h200.json $(RESULTS_DIR)/rf-h200-profile.json $(RESULTS_DIR)/rf-h200-profile.csv $(RESULTS_DIR)/launch-h200-run*.json \
	$(RESULTS_DIR)/edges-h200-compute-point-full.json $(RESULTS_DIR)/edges-h200-compute-point-full.txt \
	$(RESULTS_DIR)/edges-h200-compute-rays-full.json $(RESULTS_DIR)/edges-h200-compute-rays-full.txt \
	$(EVIDENCE_DIR)/fault-sweep.json $(EVIDENCE_DIR)/leak-cycles.json $(EVIDENCE_DIR)/soak.json
gpu-evidence-run:
	@if [ -f $(GPU_PACK) ]; then tar xzf $(GPU_PACK) -C $(BIN) && echo "unpacked $(GPU_PACK)"; fi
	@mkdir -p $(EVIDENCE_LOG) $(EVIDENCE_DIR) $(RESULTS_DIR); touch $(EVIDENCE_LOG)/start; st=0; \
	for step in $(EVIDENCE_STEPS); do \
		t0=$$(date +%s); \
		$(MAKE) --no-print-directory $$step > $(EVIDENCE_LOG)/$$step.log 2>&1; rc=$$?; \
		echo "== $$step: exit $$rc after $$(( $$(date +%s) - t0 )) s"; tail -n 6 $(EVIDENCE_LOG)/$$step.log; \
		[ $$rc -eq 0 ] || st=1; \
	done; \
	if [ -n "$(EVIDENCE_TAR)" ]; then \
		files=$$(for f in $(EVIDENCE_FILES); do [ -f "$$f" ] && [ "$$f" -nt $(EVIDENCE_LOG)/start ] && echo "$$f"; done); \
		tar czf $(EVIDENCE_TAR) $$files $(EVIDENCE_LOG) && echo "packed into $(EVIDENCE_TAR):" $$files; \
	fi; \
	exit $$st

## gpu-harden: the hardening runs on two GPUs (fault sweep, 1,000 create/
## query/close cycles, an 8-goroutine soak) with evidence written to
## $(EVIDENCE_DIR)/{fault-sweep,leak-cycles,soak}.json. On one GPU the
## three tests are deferred (they need two devices).
gpu-harden:
	RAYD_REQUIRE_GPU=1 RAYD_EVIDENCE_DIR=$(EVIDENCE_DIR) \
	RAYD_FAULT_RUNS=60 RAYD_LEAK_CYCLES=1000 RAYD_SOAK_SECONDS=300 \
		$(BIN)/rayd.test -test.run 'GPUFaultSweep|GPULeakCycles|GPUSoak' -test.v -test.timeout 20m

## gpu-replicated: the replicated engine on one GPU (two replicas on the
## same device against the single-device scene, every per_ray operation
## bitwise, Offload row accounting, compute-mesh half-ray timing) ->
## $(EVIDENCE_DIR)/replicated-1gpu.json.
gpu-replicated:
	$(BIN)/replicated -out $(EVIDENCE_DIR)/replicated-1gpu.json

## bench-overhead: the replicated layer's fixed cost on one GPU (same-device
## replicas at weights [0.5, 0.5] against the single-device call, interleaved
## CUDA-event rounds, driver calls per call, every field checked on poisoned
## outputs) -> $(RESULTS_DIR)/overhead-1gpu.json. A missed target is
## reported, not failed on; a correctness failure fails.
bench-overhead:
	$(BIN)/overhead -out $(RESULTS_DIR)/overhead-1gpu.json

## bench-launch: launch micro-benchmark against the C driver-API baseline,
## LAUNCH_RUNS times -> $(RESULTS_DIR)/launch-h200-run<i>.json (needs nvcc).
bench-launch:
	nvcc -O2 -o $(BIN)/launch_native benchmarks/launch/native/launch_native.c -lcuda
	@for i in $$(seq 1 $(LAUNCH_RUNS)); do \
		$(BIN)/launchbench -native $(BIN)/launch_native -ptx ptx/basic.ptx -out $(RESULTS_DIR)/launch-h200-run$$i.json || exit 1; \
		echo "launch run $$i -> $(RESULTS_DIR)/launch-h200-run$$i.json"; done

## bench-coldstart: cold start split into driver init, context creation,
## module load (cubin, PTX JIT without and with the driver's JIT cache),
## BVH build and the first NewScene + Intersect, COLDSTART_RUNS fresh
## processes per mode -> $(RESULTS_DIR)/coldstart-h200.json.
bench-coldstart:
	$(BIN)/coldstart -n $(COLDSTART_RUNS) -out $(RESULTS_DIR)/coldstart-h200.json

## bench-geometry: single-device BVH benchmark (light and compute; the 2-,
## 4- and compressed 8-wide layouts and OptiX; on compute the ray reordering
## probe: accel.Reorderer's device pipeline end to end and its parts against
## the plain intersect, -reorder=false to leave it out) -> $(RESULTS_DIR)/geometry-h200.json.
bench-geometry:
	$(BIN)/geometry -out $(RESULTS_DIR)/geometry-h200.json

## bench-light-sweep: the light scene only, its 2-wide intersect (76 B)
## with persistent grids of 4, 6, 8, 10 and 12 blocks per SM in the same
## rounds (the light_blocks_sweep object), each checked against the CPU
## reference -> $(RESULTS_DIR)/geometry-light-sweep-h200.json.
LIGHT_BLOCKS ?= 4,6,8,10,12
bench-light-sweep:
	$(BIN)/geometry -config light -light-blocks $(LIGHT_BLOCKS) -out $(RESULTS_DIR)/geometry-light-sweep-h200.json

## bench-crossings: the crossings query (k = 8) against visibility on the
## compute scene in the same run (chords across the box, and the segments
## bench-geometry times visibility on), both layouts, crossings on the chords
## under both fetch modes (FetchAuto's headline and the other one), every
## timed launch checked against the CPU reference -> $(RESULTS_DIR)/crossings-h200.json.
bench-crossings:
	$(BIN)/crossings -out $(RESULTS_DIR)/crossings-h200.json
## bench-instances: intersect over 1,024 instances of the light grid against
## the compute scene's, transform updates, sampled rows checked against the
## CPU reference -> $(RESULTS_DIR)/instances-h200.json.
bench-instances:
	$(BIN)/instancebench -out $(RESULTS_DIR)/instances-h200.json

## bench-tlas-build: the top-level build benchmarks of the accel test
## binary over the instanced benchmark's 1,024 instances (host builds,
## reused and in parallel; instance updates staged on the host and on the
## device; the device build rayd_tlas_build, launch and wait), nothing
## skipped -> $(RESULTS_DIR)/tlas-build-h200.json (stamped by
## internal/tools/benchrecord) and the printed run in tlas-build-h200.txt.
TLAS_BENCH := -test.run xxx -test.bench 'TLASBuilderReused|InstanceUpdateHost|GPUTLASBuild' -test.benchtime 500x
bench-tlas-build:
	RAYD_REQUIRE_GPU=1 $(BIN)/accel.test $(TLAS_BENCH) > $(BIN)/tlas-build.txt; st=$$?; cat $(BIN)/tlas-build.txt; [ $$st -eq 0 ] || exit $$st; \
	$(BIN)/benchrecord -command "accel.test $(TLAS_BENCH)" -note "1,024 instances of the instanced benchmark; host figures from the same machine's CPU; BenchmarkGPUTLASBuild times rayd_tlas_build's launch and wait" \
		-out $(RESULTS_DIR)/tlas-build-h200.json < $(BIN)/tlas-build.txt && mv $(BIN)/tlas-build.txt $(RESULTS_DIR)/tlas-build-h200.txt

## bench-edges: nearest-edge queries (4,194,304 points, segments, half rays;
## light and compute edges; build time) -> $(RESULTS_DIR)/edges-h200.json
## and the printed table in edges-h200.txt.
bench-edges:
	$(BIN)/edgebench -out $(RESULTS_DIR)/edges-h200.json > $(BIN)/edges-h200.txt; st=$$?; cat $(BIN)/edges-h200.txt; \
		[ $$st -ne 0 ] || mv $(BIN)/edges-h200.txt $(RESULTS_DIR)/edges-h200.txt; exit $$st

## bench-edges-kernels: the nearest-edge ray kernels timed against each
## other in interleaved rounds (auto, pruned, rows, phased, phased_top, ops, spec;
## the float64-bounded exact walk is left out: -kernels exact times it), each
## checked as bench-edges checks -> $(RESULTS_DIR)/edges-h200-kernels.json.
bench-edges-kernels:
	$(BIN)/edgebench -kinds segment,half_ray -kernels auto,pruned,rows,phased,phased_top,ops,spec -rounds 3 -warmup 1 \
		-out $(RESULTS_DIR)/edges-h200-kernels.json > $(BIN)/edges-kernels.txt; st=$$?; cat $(BIN)/edges-kernels.txt; \
		[ $$st -ne 0 ] || mv $(BIN)/edges-kernels.txt $(RESULTS_DIR)/edges-h200-kernels.txt; exit $$st

## bench-edges-full-point / -rays: every compute row against the device
## brute force (points: about 100 s on one H200; rays: about 195 s per
## query on one, BRUTE_DEVICES=1, and 100 s on two, BRUTE_DEVICES=2).
BRUTE_DEVICES ?= 2
bench-edges-full-point:
	$(BIN)/edgebench -config compute -kinds point -brute-rows 4194304 \
		-out $(RESULTS_DIR)/edges-h200-compute-point-full.json > $(BIN)/point-full.txt; st=$$?; cat $(BIN)/point-full.txt; \
		[ $$st -ne 0 ] || mv $(BIN)/point-full.txt $(RESULTS_DIR)/edges-h200-compute-point-full.txt; exit $$st
bench-edges-full-rays:
	$(BIN)/edgebench -config compute -kinds segment,half_ray -rounds 3 -warmup 1 -brute-rows 4194304 -brute-devices $(BRUTE_DEVICES) \
		-out $(RESULTS_DIR)/edges-h200-compute-rays-full.json > $(BIN)/rays-full.txt; st=$$?; cat $(BIN)/rays-full.txt; \
		[ $$st -ne 0 ] || mv $(BIN)/rays-full.txt $(RESULTS_DIR)/edges-h200-compute-rays-full.txt; exit $$st

## edgebench-base: $(BIN)/edgebench-base, the edge benchmark as it stood at
## POINT_BASE (02e375d: the commit whose point-query figures the nearest-edge
## issue quotes as its "no slower than today" bar), built from `git archive`
## of that commit (so with no local change) and stamped with its full hash.
## Needs Go and git, no GPU; carry it with the other binaries.
POINT_BASE ?= 02e375d
edgebench-base:
	@rm -rf $(BIN)/base-src && mkdir -p $(BIN)/base-src
	git archive $(POINT_BASE) | tar -x -C $(BIN)/base-src
	sha=$$(git rev-parse $(POINT_BASE)) && cd $(BIN)/base-src && CGO_ENABLED=0 $(GO) build \
		-ldflags "-s -w -X main.commit=$$sha -X github.com/rayd-go/rayd/internal/buildinfo.commit=$$sha -X github.com/rayd-go/rayd/internal/buildinfo.dirty=false" \
		-o ../edgebench-base ./benchmarks/edges
	@rm -rf $(BIN)/base-src

## bench-edges-point-ab: the queries POINT_AB_KINDS (default the point
## queries) of the configurations POINT_AB_CONFIG (default light and compute),
## POINT_AB_ROUNDS rounds each, of $(BIN)/edgebench (this build) and
## $(BIN)/edgebench-base (make edgebench-base) in alternating processes on one
## GPU, POINT_AB_RUNS pairs, the order swapped every pair (base first in odd
## pairs), each run checked as bench-edges checks ->
## $(POINT_AB_DIR)/{base,head}-<i>.json and .txt; then edges-point-ab-summary
## (no GPU) sets them side by side.
POINT_AB_RUNS   ?= 4
POINT_AB_ROUNDS ?= 15
POINT_AB_KINDS  ?= point
POINT_AB_CONFIG ?=
POINT_AB_DIR    ?= $(RESULTS_DIR)/experiments/edge-point-base
comma := ,
bench-edges-point-ab:
	@mkdir -p $(POINT_AB_DIR)
	@for i in $$(seq 1 $(POINT_AB_RUNS)); do \
		if [ $$((i % 2)) -eq 1 ]; then order="base head"; else order="head base"; fi; \
		for v in $$order; do bin=$(BIN)/edgebench; [ $$v = base ] && bin=$(BIN)/edgebench-base; \
			echo "== pair $$i: $$v ($$bin)"; \
			$$bin $(if $(POINT_AB_CONFIG),-config $(POINT_AB_CONFIG)) -kinds $(POINT_AB_KINDS) -rounds $(POINT_AB_ROUNDS) \
				-out $(POINT_AB_DIR)/$$v-$$i.json > $(POINT_AB_DIR)/$$v-$$i.txt || exit 1; \
			grep -E "^($(subst $(comma),|,$(POINT_AB_KINDS))) " $(POINT_AB_DIR)/$$v-$$i.txt; done; done

## edges-point-ab-summary: internal/tools/edgeab over bench-edges-point-ab's
## records (base as a, head as b) -> $(POINT_AB_DIR)/summary.json and .txt.
edges-point-ab-summary:
	$(GO) run ./internal/tools/edgeab -a '$(POINT_AB_DIR)/base-*.json' -b '$(POINT_AB_DIR)/head-*.json' \
		-out $(POINT_AB_DIR)/summary.json > $(POINT_AB_DIR)/summary.txt && cat $(POINT_AB_DIR)/summary.txt

## bench-edges-light-rays-ab / edges-light-rays-ab-summary: the same for the
## light grid's segments and half rays (the issue quotes 55.9 and 52.3 ms at
## POINT_AB's base and asks for 8 ms) -> $(LIGHT_RAYS_AB_DIR).
LIGHT_RAYS_AB_DIR ?= $(RESULTS_DIR)/experiments/edge-light-rays-base
bench-edges-light-rays-ab:
	$(MAKE) bench-edges-point-ab POINT_AB_KINDS=segment,half_ray POINT_AB_CONFIG=light POINT_AB_DIR=$(LIGHT_RAYS_AB_DIR)
edges-light-rays-ab-summary:
	$(MAKE) edges-point-ab-summary POINT_AB_DIR=$(LIGHT_RAYS_AB_DIR)

## profile-edges-point: Nsight Compute (full set, clocks left as the driver
## set them) on the compute cloud's first point-query launch; its raw page
## -> $(POINT_AB_DIR)/point-profile-compute.csv. Needs ncu.
profile-edges-point:
	@mkdir -p $(POINT_AB_DIR)
	$(NCU) --clock-control none --set full -k regex:'^rayd_edge_nearest_point$$' -c 1 -f -o $(BIN)/edge-point-profile \
		$(BIN)/edgebench -config compute -kinds point -rounds 1 -warmup 0
	$(NCU) -i $(BIN)/edge-point-profile.ncu-rep --csv --page raw > $(POINT_AB_DIR)/point-profile-compute.csv

## bench-closest: closest point on the compute mesh (2,097,152 triangles),
## 4,194,304 points uniform in its box, checked against the CPU reference
## and the device brute force -> $(RESULTS_DIR)/closest-h200.json and the
## printed summary in closest-h200.txt.
bench-closest:
	$(BIN)/closestbench -out $(RESULTS_DIR)/closest-h200.json > $(BIN)/closest-h200.txt; st=$$?; cat $(BIN)/closest-h200.txt; \
		[ $$st -ne 0 ] || mv $(BIN)/closest-h200.txt $(RESULTS_DIR)/closest-h200.txt; exit $$st

## bench-rf: RF benchmark -> $(RESULTS_DIR)/rf-h200.json.
bench-rf:
	$(BIN)/rfbench -out $(RESULTS_DIR)/rf-h200.json

## profile-rf: Nsight Compute (full set, clocks left as the driver set them)
## on one launch of accum_dfr_direct over the 67,108,864-sample fixture, its
## raw page -> $(RESULTS_DIR)/rf-h200-profile.csv, then the same case timed
## without the profiler and set against the profile's instruction count
## (instructions per sample, the instruction-issue bound and the kernel's
## share of it) -> $(RESULTS_DIR)/rf-h200-profile.json. Needs ncu.
NCU ?= ncu
profile-rf:
	$(NCU) --clock-control none --set full -k regex:'^rf_accum' -c 1 -f -o $(BIN)/rf-accum-profile \
		$(BIN)/rfbench -only direct_fixture -samples 67108864 -rounds 1 -warmup 0
	$(NCU) -i $(BIN)/rf-accum-profile.ncu-rep --csv --page raw > $(BIN)/rf-h200-profile.csv
	$(BIN)/rfbench -only direct_fixture -samples 67108864 -ncu $(BIN)/rf-h200-profile.csv -out $(RESULTS_DIR)/rf-h200-profile.json \
		&& mv $(BIN)/rf-h200-profile.csv $(RESULTS_DIR)/rf-h200-profile.csv

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
