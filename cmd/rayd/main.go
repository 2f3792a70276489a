// Command rayd is rayd-go's command-line tool.
//
//	rayd info [-json]   driver version, every device, the peer-access matrix
//	                    and whether libnvoptix and libnccl load
//	rayd demo [-config light|compute] [-rays N] [-backend auto|cuda|optix|cpu]
//	                    trace a benchmark scene on the best backend available
//	rayd bench [-config light|compute|all] [-devices 0,1] [-json PATH] [-plot PATH] ...
//	                    the multi-device benchmark: one GPU against every GPU,
//	                    calibrated rows, offload, accumulation (CPU reference
//	                    on a small scene when there is no driver)
//	rayd bench summarize [-json PATH] [-plot PATH] RECORD.json...
//	                    min/median/max of every row over repeated runs
//	rayd calibrate [-config light|compute] [-devices 0,1] [-json PATH]
//	                    calibrate intersect and trace_reflections and print
//	                    describe() for each
//	rayd launch -n N prog args...
//	                    start N ranks of prog on this node (process per GPU)
//
// Without an NVIDIA driver, `rayd info` prints the loader's error (every path
// it tried) and exits with status 1.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "info":
		return cmdInfo(args[1:], stdout, stderr)
	case "demo":
		return cmdDemo(args[1:], stdout, stderr)
	case "launch":
		return cmdLaunch(args[1:], stdout, stderr)
	case "bench":
		return cmdBench(args[1:], stdout, stderr)
	case "calibrate":
		return cmdCalibrate(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "rayd: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, `usage: rayd <command> [flags]

commands:
  info    show the CUDA driver, devices, peer access and optional libraries
  demo    trace a benchmark scene (light or compute) on the best backend available
  bench      the multi-device benchmark (rayd bench -h for its flags)
  calibrate  measure the per-operation device weights of a benchmark scene
  launch  run N copies of a program, one per GPU, with RANK/LOCAL_RANK/WORLD_SIZE set`)
}
