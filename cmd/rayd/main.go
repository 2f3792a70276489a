// Command rayd is rayd-go's command-line tool.
//
//	rayd info [-json]       the CUDA driver, every device, the peer-access
//	                        matrix and the optional libraries (or why not)
//	rayd demo [flags]       trace a benchmark scene on the best backend available
//	rayd bench [flags]      the multi-device benchmark (CPU reference without a GPU)
//	rayd bench summarize    min/median/max of every row over repeated runs
//	rayd bench pin          add benchmark records to the manifest
//	rayd calibrate [flags]  per-operation device weights of a benchmark scene
//	rayd launch -n N prog   start N ranks of prog on this node (process per GPU)
//	rayd version [-json]    module version, commit, dirty flag and Go version
//
// Every command prints its flags with -h (exit status 0). A usage error
// exits with status 2, a runtime failure with status 1. Machine-readable
// output (-json -) is the only thing written to standard output;
// diagnostics, notices and tables then go to standard error.
//
// The binary is pure Go (CGO_ENABLED=0) but dynamically linked against the
// system loader: it dlopens libcuda at run time, so it needs a glibc-based
// system (no musl, no FROM scratch image). Without an NVIDIA driver, `rayd
// info` reports the loader's error (every path it tried) and exits with
// status 1; `rayd bench` runs the CPU reference and says so.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1 // a runtime failure
	exitUsage   = 2 // a usage error
)

// command is one subcommand of rayd.
type command struct {
	name    string
	summary string // one line
	run     func(args []string, stdout, stderr io.Writer) int
}

// commands lists rayd's subcommands in the order usage prints them.
func commands() []command {
	return []command{
		{"info", "show the CUDA driver, devices, peer access and optional libraries", cmdInfo},
		{"demo", "trace a benchmark scene (light or compute) on the best backend available", cmdDemo},
		{"bench", "run the multi-device benchmark (the CPU reference without a GPU)", cmdBench},
		{"calibrate", "measure the per-operation device weights of a benchmark scene", cmdCalibrate},
		{"launch", "run N copies of a program, one per GPU, with RANK/LOCAL_RANK/WORLD_SIZE set", cmdLaunch},
		{"version", "print the module version, commit, dirty flag and Go version", cmdVersion},
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches args to a command and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[0] == "help" {
			return run([]string{args[1], "-h"}, stdout, stderr)
		}
		usage(stdout)
		return exitOK
	case "-version", "--version":
		return cmdVersion(nil, stdout, stderr)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "rayd: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
}

// usage prints the command list.
func usage(w io.Writer) {
	var b strings.Builder
	b.WriteString("rayd is the command-line tool of rayd-go: GPU ray geometry on NVIDIA GPUs.\n\n")
	b.WriteString("usage: rayd <command> [flags]\n\ncommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-10s %s\n", c.name, c.summary)
	}
	b.WriteString("\n`rayd <command> -h` (or `rayd help <command>`) describes a command and its flags.\n")
	b.WriteString("Exit status: 0 success, 1 failure, 2 usage error.\n")
	fmt.Fprint(w, b.String())
}
