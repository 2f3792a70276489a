// Package benchhead holds what the single-device GPU benchmark commands
// (benchmarks/geometry, benchmarks/rf, benchmarks/edges) share: the header
// of their JSON reports (commit, date, device, driver, the SHA-256 of every
// embedded PTX module) and the median/minimum summary of timed rounds.
package benchhead

import (
	"sort"
	"time"

	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ptx"
)

// Header is the common head of a benchmark report; embedded in a report
// struct, its fields appear at the top level of the JSON.
type Header struct {
	Commit string            `json:"commit"`
	Date   string            `json:"date"`
	Device launch.Info       `json:"device"`
	Driver int               `json:"driver_version"`
	PTX    map[string]string `json:"ptx_sha256"`
}

// New describes device ordinal now, for a binary built at commit.
func New(commit string, ordinal int) (Header, error) {
	info, err := launch.DeviceInfo(ordinal)
	if err != nil {
		return Header{}, err
	}
	ver, _ := driver.DriverVersion()
	h := Header{Commit: commit, Date: time.Now().UTC().Format(time.RFC3339), Device: info, Driver: ver,
		PTX: map[string]string{}}
	if m, err := ptx.EmbeddedManifest(); err == nil {
		for _, mod := range m.Modules {
			h.PTX[mod.Name] = mod.SHA256
		}
	}
	return h, nil
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
