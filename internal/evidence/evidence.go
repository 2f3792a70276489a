// Package evidence is the head every committed GPU evidence file starts
// with (test acceptance, hardening runs, benchmark reports): the build
// stamp of the binary that produced it (commit and dirty flag), the UTC
// date, the driver version, the names of the devices it ran on, and the
// SHA-256 of every PTX module in the binary's embedded manifest and of the
// manifest itself (which pins the prebuilt cubins too), and whether the run
// forced every module through PTX JIT (RAYD_PTX_JIT). Embedded in a report struct, its fields appear at the
// top level of the JSON, where `make evidence-status` reads them.
package evidence

import (
	"errors"
	"fmt"
	"time"

	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/internal/buildinfo"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ptx"
)

// Header is the common head of an evidence file.
type Header struct {
	// Commit and Dirty repeat Build's, at the top level, for readers that
	// know no more than a commit field.
	Commit string          `json:"commit"`
	Dirty  bool            `json:"dirty"`
	Build  buildinfo.Stamp `json:"build"`
	Date   string          `json:"date"`
	// Driver is the CUDA driver version (cuDriverGetVersion), 0 when no
	// driver loaded.
	Driver  int      `json:"driver_version"`
	Devices []string `json:"devices"`
	// PTX maps each embedded module to its SHA-256; PTXManifest is the
	// SHA-256 of the embedded manifest.json.
	PTX         map[string]string `json:"ptx_sha256"`
	PTXManifest string            `json:"ptx_manifest_sha256"`
	// PTXJIT is true when RAYD_PTX_JIT forced every module to be
	// JIT-compiled from its PTX; false means each device loaded the
	// embedded cubin of its architecture where there is one.
	PTXJIT bool `json:"ptx_jit_forced"`
}

// New describes this binary and the devices ordinals (every visible device
// when ordinals is nil) now. The stamp, date and PTX digests are always
// filled in; the error says what of the driver and devices could not be
// read.
func New(ordinals []int) (Header, error) {
	st := buildinfo.Get()
	h := Header{Commit: st.Commit, Dirty: st.Dirty, Build: st, Date: time.Now().UTC().Format(time.RFC3339),
		PTX: map[string]string{}, Devices: []string{}, PTXJIT: launch.PTXJITForced()}
	var errs []error
	if m, err := ptx.EmbeddedManifest(); err == nil {
		for _, mod := range m.Modules {
			h.PTX[mod.Name] = mod.SHA256
		}
	} else {
		errs = append(errs, err)
	}
	if d, err := ptx.ManifestSHA256(); err == nil {
		h.PTXManifest = d
	} else {
		errs = append(errs, err)
	}
	ver, err := driver.DriverVersion()
	if err != nil {
		return h, errors.Join(append(errs, fmt.Errorf("evidence: driver version: %w", err))...)
	}
	h.Driver = ver
	if ordinals == nil {
		n, err := launch.Count()
		if err != nil {
			return h, errors.Join(append(errs, fmt.Errorf("evidence: device count: %w", err))...)
		}
		for i := range n {
			ordinals = append(ordinals, i)
		}
	}
	for _, o := range ordinals {
		info, err := launch.DeviceInfo(o)
		if err != nil {
			errs = append(errs, fmt.Errorf("evidence: device %d: %w", o, err))
			continue
		}
		h.Devices = append(h.Devices, info.Name)
	}
	return h, errors.Join(errs...)
}

// Describe is the one-line form of h for a report's first line.
func (h Header) Describe() string {
	return fmt.Sprintf("build %s, %d device(s) %v, driver %d, %s", h.Build.String(), len(h.Devices), h.Devices, h.Driver, h.Date)
}
