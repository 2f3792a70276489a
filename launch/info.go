package launch

import (
	"errors"
	"fmt"

	"github.com/rayd-go/rayd/driver"
)

// Info describes one device.
type Info struct {
	Ordinal        int    `json:"ordinal"`
	Name           string `json:"name"`
	CCMajor        int    `json:"cc_major"`
	CCMinor        int    `json:"cc_minor"`
	SMs            int    `json:"sms"`
	TotalMem       uint64 `json:"total_mem_bytes"`
	L2Bytes        int    `json:"l2_bytes"`
	PCIBusID       string `json:"pci_bus_id"`
	UUID           string `json:"uuid"`
	ClockKHz       int    `json:"clock_khz"`
	MemoryClockKHz int    `json:"memory_clock_khz"`
	MemoryBusBits  int    `json:"memory_bus_bits"`
}

// DeviceInfo queries device ordinal without opening it.
func DeviceInfo(ordinal int) (Info, error) {
	d, err := driver.DeviceGet(ordinal)
	if err != nil {
		return Info{}, err
	}
	in := Info{Ordinal: ordinal}
	var errs []error
	get := func(a driver.DeviceAttribute) int {
		v, err := d.Attribute(a)
		errs = append(errs, err)
		return v
	}
	in.Name, err = d.Name()
	errs = append(errs, err)
	in.CCMajor, in.CCMinor = get(driver.AttrComputeCapabilityMajor), get(driver.AttrComputeCapabilityMinor)
	in.SMs, in.L2Bytes = get(driver.AttrMultiprocessorCount), get(driver.AttrL2CacheSize)
	in.ClockKHz, in.MemoryClockKHz = get(driver.AttrClockRate), get(driver.AttrMemoryClockRate)
	in.MemoryBusBits = get(driver.AttrGlobalMemoryBusWidth)
	in.TotalMem, err = d.TotalMem()
	errs = append(errs, err)
	in.PCIBusID, err = d.PCIBusID()
	errs = append(errs, err)
	in.UUID, err = d.UUID()
	if errors.Is(err, driver.ErrNotSupported) {
		err = nil
	}
	errs = append(errs, err)
	return in, errors.Join(errs...)
}

// CanAccessPeer reports whether device a can address device b's memory.
func CanAccessPeer(a, b int) (bool, error) {
	da, err := driver.DeviceGet(a)
	if err != nil {
		return false, err
	}
	db, err := driver.DeviceGet(b)
	if err != nil {
		return false, err
	}
	return da.CanAccessPeer(db)
}

// EnablePeerAccess enables access in both directions between a and b; it
// is a no-op for pairs already enabled.
func EnablePeerAccess(a, b *Device) error {
	if a == b {
		return nil
	}
	for _, p := range [][2]*Device{{a, b}, {b, a}} {
		ok, err := CanAccessPeer(p[0].ordinal, p[1].ordinal)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("launch: %v cannot access %v: %w", p[0], p[1], driver.ErrPeerAccessUnsupported)
		}
		peer := p[1].ctx
		if err := p[0].with(func() error { return p[0].ctx.EnablePeerAccess(peer) }); err != nil {
			return err
		}
		p[0].addPeer(p[1])
	}
	return nil
}

// addPeer records that kernels on d may address p's memory (peer access
// from d to p is enabled).
func (d *Device) addPeer(p *Device) {
	d.peerMu.Lock()
	defer d.peerMu.Unlock()
	old, _ := d.peers.Load().([]*Device)
	for _, x := range old {
		if x == p {
			return
		}
	}
	d.peers.Store(append(append([]*Device(nil), old...), p))
}

// reaches reports whether kernels on d may take buffers of p as arguments:
// peer access from d to p was enabled through EnablePeerAccess.
func (d *Device) reaches(p *Device) bool {
	peers, _ := d.peers.Load().([]*Device)
	for _, x := range peers {
		if x == p {
			return true
		}
	}
	return false
}

// DriverCalls returns the driver calls this process has made so far,
// context binds excluded, and the context binds apart (driver.CallCounts).
func DriverCalls() (calls, binds int64) { return driver.CallCounts() }

// DriverCreations returns the events and device allocations this process
// has asked the driver for so far (driver.Creations).
func DriverCreations() (events, allocs int64) { return driver.Creations() }

// GrantPoolAccess lets device peer read and write the memory of owner's
// stream-ordered pool (buffers from AllocAsync), which peer access alone
// does not cover. A no-op when both are one device or owner has no pool.
func GrantPoolAccess(owner, peer *Device) error {
	if owner == peer || owner.ordinal == peer.ordinal || owner.pool == nil {
		return nil
	}
	return owner.with(func() error { return owner.pool.GrantReadWrite(peer.ordinal) })
}

// ComputeCapability returns the compute capability of device ordinal
// without opening it.
func ComputeCapability(ordinal int) (major, minor int, err error) {
	d, err := driver.DeviceGet(ordinal)
	if err != nil {
		return 0, 0, err
	}
	return d.ComputeCapability()
}
