// Package src embeds the CUDA sources of rayd-go's PTX modules (the .cu
// and .cuh files of this directory), so that a test comparing Go launch
// code or record layouts with the kernels' declarations reads them from its
// own binary and runs from any working directory: a prebuilt test binary
// on a GPU machine, too.
//
// The sources are data only; ptx/manifest.json records their digests and
// cmd/ptxdigest checks them against the committed PTX.
package src

import (
	"embed"
	"io/fs"
	"sort"
)

//go:embed *.cu *.cuh
var files embed.FS

// Read returns the bytes of the source file name (for example "trace.cu").
func Read(name string) ([]byte, error) {
	return files.ReadFile(name)
}

// Names lists the embedded source files, sorted.
func Names() []string {
	entries, _ := fs.ReadDir(files, ".")
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}
