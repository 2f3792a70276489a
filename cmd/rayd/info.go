package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/internal/buildinfo"
	"github.com/rayd-go/rayd/launch"
)

// infoReport is what `rayd info -json` prints on success.
type infoReport struct {
	DriverVersion int             `json:"driver_version"`
	LibCUDA       string          `json:"libcuda"`
	Devices       []launch.Info   `json:"devices"`
	PeerAccess    [][]bool        `json:"peer_access"` // [from][to]
	Libraries     []libraryStatus `json:"libraries"`
	Build         buildinfo.Stamp `json:"build"`
}

// infoFailure is what `rayd info -json` prints when the driver cannot
// describe the machine: the error, a short code ("no_driver", "no_device"
// or "driver") and the build stamp.
type infoFailure struct {
	Error string          `json:"error"`
	Code  string          `json:"code"`
	Build buildinfo.Stamp `json:"build"`
}

type libraryStatus struct {
	Name    string `json:"name"`
	Path    string `json:"path,omitempty"`
	Version string `json:"version,omitempty"`
	Error   string `json:"error,omitempty"`
}

// cmdInfo prints the driver, the devices, the peer-access matrix and the
// optional libraries; exit status 1 (and with -json an error object on
// stdout) when the driver cannot be loaded or queried.
func cmdInfo(args []string, stdout, stderr io.Writer) int {
	f := newFlags("info", "rayd info [-json]", `
Shows the CUDA driver version and library, every device (name, compute
capability, SMs, memory, L2, PCI bus, UUID), the peer-access matrix and
whether libnvoptix and libnccl load (with their paths and versions).
Without an NVIDIA driver it reports the loader's error, every path it
tried, and exits with status 1.`)
	asJSON := f.Bool("json", false, "print JSON on stdout (an error object when the driver fails)")
	if code, done := f.parse(args, stdout, stderr); done {
		return code
	}
	if f.NArg() > 0 {
		return usageError(stderr, "info", "unexpected argument %q", f.Arg(0))
	}
	rep, err := gatherInfo()
	if err != nil {
		fmt.Fprintf(stderr, "rayd info: %v\n", err)
		if *asJSON {
			writeJSON(stdout, stderr, "info", infoFailure{Error: err.Error(), Code: infoErrorCode(err), Build: buildinfo.Get()})
		}
		return exitFailure
	}
	rep.Build = buildinfo.Get()
	if *asJSON {
		return writeJSON(stdout, stderr, "info", rep)
	}
	printInfo(stdout, rep)
	return exitOK
}

// infoErrorCode classifies a driver failure for the JSON error object.
func infoErrorCode(err error) string {
	switch {
	case errors.Is(err, driver.ErrNoDriver):
		return "no_driver"
	case errors.Is(err, driver.ErrNoDevice):
		return "no_device"
	}
	return "driver"
}

func gatherInfo() (*infoReport, error) {
	v, err := driver.DriverVersion()
	if err != nil {
		return nil, err
	}
	n, err := driver.DeviceCount()
	if err != nil {
		return nil, err
	}
	rep := &infoReport{DriverVersion: v, LibCUDA: driver.CUDAInfo().Path}
	for i := 0; i < n; i++ {
		in, err := launch.DeviceInfo(i)
		if err != nil {
			return nil, err
		}
		rep.Devices = append(rep.Devices, in)
	}
	rep.PeerAccess = make([][]bool, n)
	for i := range rep.PeerAccess {
		rep.PeerAccess[i] = make([]bool, n)
		for j := 0; j < n; j++ {
			if i == j {
				continue
			}
			ok, err := launch.CanAccessPeer(i, j)
			if err != nil {
				return nil, err
			}
			rep.PeerAccess[i][j] = ok
		}
	}
	optix := libraryStatus{Name: "libnvoptix"}
	if err := driver.LoadOptiX(); err != nil {
		optix.Error = err.Error()
	} else {
		optix.Path = driver.OptiXInfo().Path
	}
	nccl := libraryStatus{Name: "libnccl"}
	if ver, err := driver.NCCLVersion(); err != nil {
		nccl.Error = err.Error()
	} else {
		nccl.Path = driver.NCCLInfo().Path
		nccl.Version = fmt.Sprintf("%d.%d.%d", ver/10000, ver/100%100, ver%100)
	}
	rep.Libraries = []libraryStatus{optix, nccl}
	return rep, nil
}

func printInfo(w io.Writer, r *infoReport) {
	fmt.Fprintf(w, "CUDA driver: %d.%d (%s)\n", r.DriverVersion/1000, r.DriverVersion%1000/10, r.LibCUDA)
	fmt.Fprintf(w, "devices: %d\n", len(r.Devices))
	for _, d := range r.Devices {
		fmt.Fprintf(w, "  cuda:%d  %-22s cc %d.%d  %3d SMs  %6.1f GiB  L2 %2d MiB  pci %s  %s\n",
			d.Ordinal, d.Name, d.CCMajor, d.CCMinor, d.SMs, float64(d.TotalMem)/(1<<30), d.L2Bytes>>20, d.PCIBusID, d.UUID)
	}
	if len(r.Devices) > 1 {
		fmt.Fprintln(w, "peer access (row can access column):")
		var hdr strings.Builder
		hdr.WriteString("          ")
		for j := range r.Devices {
			fmt.Fprintf(&hdr, " cuda:%d", j)
		}
		fmt.Fprintln(w, hdr.String())
		for i, row := range r.PeerAccess {
			fmt.Fprintf(w, "  cuda:%d  ", i)
			for j, ok := range row {
				cell := "  no  "
				switch {
				case i == j:
					cell = "   -  "
				case ok:
					cell = "  yes "
				}
				fmt.Fprintf(w, " %s", cell)
			}
			fmt.Fprintln(w)
		}
	}
	for _, l := range r.Libraries {
		if l.Error != "" {
			fmt.Fprintf(w, "%s: not available: %s\n", l.Name, strings.ReplaceAll(l.Error, "\n", "\n    "))
			continue
		}
		fmt.Fprintf(w, "%s: loaded from %s", l.Name, l.Path)
		if l.Version != "" {
			fmt.Fprintf(w, " (version %s)", l.Version)
		}
		fmt.Fprintln(w)
	}
}
