package multidevice

import (
	"fmt"
	"runtime"
	"time"

	"github.com/rayd-go/rayd/benchmarks"
	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/launch"
)

// linkBytes is the size of the copy that measures a link (spec §10.2).
const linkBytes = 256 << 20

// machine records the devices, every ordered peer-access pair and, with two
// or more devices, the copy speed of every directed pair.
func machine(c *clock, ordinals []int) (benchmarks.Machine, error) {
	m := benchmarks.Machine{DeviceCount: len(ordinals), Go: runtime.Version(), CUDA: "unknown"}
	if v, err := driver.DriverVersion(); err == nil {
		m.CUDA = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
	}
	for _, o := range ordinals {
		info, err := launch.DeviceInfo(o)
		if err != nil {
			return m, err
		}
		m.Devices = append(m.Devices, benchmarks.DeviceInfo{Index: o, Name: info.Name,
			TotalBytes: int64(info.TotalMem), ComputeCapability: []int{info.CCMajor, info.CCMinor}})
	}
	m.PeerAccess = benchmarks.PeerAccess{Status: benchmarks.PeerNotApplicable, Pairs: []benchmarks.PeerPair{}}
	if len(ordinals) < 2 {
		f := false
		m.PeerAccess.AllPairsAccessible = &f
		return m, nil
	}
	all := true
	m.PeerAccess.Status = benchmarks.PeerMeasured
	for i, a := range ordinals {
		for j, b := range ordinals {
			if i == j {
				continue
			}
			ok, err := launch.CanAccessPeer(a, b)
			if err != nil {
				return m, err
			}
			all = all && ok
			m.PeerAccess.Pairs = append(m.PeerAccess.Pairs, benchmarks.PeerPair{Source: a, Destination: b, CanAccess: ok})
		}
	}
	m.PeerAccess.AllPairsAccessible = &all
	devs := c.Devices()
	for i := range devs {
		for j := range devs {
			if i == j {
				continue
			}
			gbps, err := linkSpeed(devs[i], devs[j])
			if err != nil {
				return m, fmt.Errorf("link %d→%d: %w", ordinals[i], ordinals[j], err)
			}
			m.Links = append(m.Links, benchmarks.Link{Source: ordinals[i], Destination: ordinals[j], GBps: gbps})
			if i == 0 && j == 1 {
				m.D2DGBps = gbps
			}
		}
	}
	return m, nil
}

// linkSpeed copies 256 MiB from src to dst six times on a stream of src,
// discards the first and returns the best of the other five in GiB/s
// (labelled GB/s, as RayD does), timed with CUDA events.
func linkSpeed(src, dst *launch.Device) (float64, error) {
	if err := launch.EnablePeerAccess(src, dst); err != nil {
		return 0, err
	}
	a, err := launch.Alloc[float32](src, linkBytes/4)
	if err != nil {
		return 0, err
	}
	defer a.Close()
	b, err := launch.Alloc[float32](dst, linkBytes/4)
	if err != nil {
		return 0, err
	}
	defer b.Close()
	st, err := src.NewStream()
	if err != nil {
		return 0, err
	}
	defer st.Close()
	e0, err := src.NewEvent(true)
	if err != nil {
		return 0, err
	}
	defer e0.Close()
	e1, err := src.NewEvent(true)
	if err != nil {
		return 0, err
	}
	defer e1.Close()
	if err := a.Memset32(st, 0x3f800000); err != nil {
		return 0, err
	}
	best := time.Duration(0)
	for i := range 6 {
		if err := e0.Record(st); err != nil {
			return 0, err
		}
		if err := b.CopyFrom(st, a); err != nil {
			return 0, err
		}
		if err := e1.Record(st); err != nil {
			return 0, err
		}
		if err := e1.Synchronize(); err != nil {
			return 0, err
		}
		ms, err := launch.Elapsed(e0, e1)
		if err != nil {
			return 0, err
		}
		d := time.Duration(float64(ms) * float64(time.Millisecond))
		if i > 0 && (best == 0 || d < best) {
			best = d
		}
	}
	if best <= 0 {
		return 0, fmt.Errorf("multidevice: the copy measured no time")
	}
	return (float64(linkBytes) / (1 << 30)) / best.Seconds(), nil
}
