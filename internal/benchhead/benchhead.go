// Package benchhead holds what the GPU benchmark commands (benchmarks/geometry,
// benchmarks/rf, benchmarks/edges, benchmarks/overhead, `rayd bench`) share:
// the header of their JSON reports (the evidence head: build stamp, date,
// driver, devices, the SHA-256 of every embedded PTX module; plus the
// device's description), the median/minimum summary of timed rounds and
// the CUDA-event clock of interleaved rounds.
package benchhead

import (
	"sort"

	"github.com/rayd-go/rayd/internal/evidence"
	"github.com/rayd-go/rayd/launch"
)

// Header is the common head of a benchmark report; embedded in a report
// struct, its fields appear at the top level of the JSON.
type Header struct {
	evidence.Header
	Device launch.Info `json:"device"`
}

// New describes device ordinal now, for this binary's build.
func New(ordinal int) (Header, error) {
	info, err := launch.DeviceInfo(ordinal)
	if err != nil {
		return Header{}, err
	}
	h, err := evidence.New([]int{ordinal})
	if err != nil {
		return Header{}, err
	}
	return Header{Header: h, Device: info}, nil
}

// Timing is the summary of timed rounds in milliseconds.
type Timing struct {
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Rounds []float64 `json:"rounds"`
}

// Summarize returns the median and minimum of rounds (which it keeps, in
// order). rounds must not be empty.
func Summarize(rounds []float64) Timing {
	s := append([]float64(nil), rounds...)
	sort.Float64s(s)
	return Timing{Median: s[len(s)/2], Min: s[0], Rounds: rounds}
}
