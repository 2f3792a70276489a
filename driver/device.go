package driver

import (
	"fmt"
	"unsafe"
)

// Device is a CUDA device handle together with its ordinal.
type Device struct {
	Ordinal int
	handle  int32
}

// DeviceAttribute is a CUdevice_attribute.
type DeviceAttribute int32

// Device attributes used by rayd-go (cuda.h values).
const (
	AttrMaxThreadsPerBlock       DeviceAttribute = 1
	AttrMaxSharedMemoryPerBlock  DeviceAttribute = 8
	AttrWarpSize                 DeviceAttribute = 10
	AttrClockRate                DeviceAttribute = 13
	AttrMultiprocessorCount      DeviceAttribute = 16
	AttrPCIBusID                 DeviceAttribute = 33
	AttrPCIDeviceID              DeviceAttribute = 34
	AttrMemoryClockRate          DeviceAttribute = 36
	AttrGlobalMemoryBusWidth     DeviceAttribute = 37
	AttrL2CacheSize              DeviceAttribute = 38
	AttrUnifiedAddressing        DeviceAttribute = 41
	AttrPCIDomainID              DeviceAttribute = 50
	AttrComputeCapabilityMajor   DeviceAttribute = 75
	AttrComputeCapabilityMinor   DeviceAttribute = 76
	AttrMemoryPoolsSupported     DeviceAttribute = 115
	AttrMaxSharedMemoryPerBlockO DeviceAttribute = 97 // opt-in maximum
)

// DeviceGet returns the device with the given ordinal.
func DeviceGet(ordinal int) (Device, error) {
	if err := Load(); err != nil {
		return Device{}, err
	}
	var h int32
	r := invoke("cuDeviceGet", cuda.cuDeviceGet, uintptr(unsafe.Pointer(&h)), uintptr(ordinal))
	if err := check("cuDeviceGet", ordinal, r); err != nil {
		return Device{}, err
	}
	return Device{Ordinal: ordinal, handle: h}, nil
}

// Name returns the device's marketing name (cuDeviceGetName).
func (d Device) Name() (string, error) {
	buf := make([]byte, 256)
	r := invoke("cuDeviceGetName", cuda.cuDeviceGetName, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(d.handle))
	if err := check("cuDeviceGetName", d.Ordinal, r); err != nil {
		return "", err
	}
	return goString(&buf[0]), nil
}

// Attribute returns one device attribute (cuDeviceGetAttribute).
func (d Device) Attribute(a DeviceAttribute) (int, error) {
	var v int32
	r := invoke("cuDeviceGetAttribute", cuda.cuDeviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(a), uintptr(d.handle))
	return int(v), check("cuDeviceGetAttribute", d.Ordinal, r)
}

// ComputeCapability returns (major, minor).
func (d Device) ComputeCapability() (int, int, error) {
	major, err := d.Attribute(AttrComputeCapabilityMajor)
	if err != nil {
		return 0, 0, err
	}
	minor, err := d.Attribute(AttrComputeCapabilityMinor)
	return major, minor, err
}

// TotalMem returns the device's total memory in bytes.
func (d Device) TotalMem() (uint64, error) {
	var n uint64
	r := invoke("cuDeviceTotalMem_v2", cuda.cuDeviceTotalMem_v2, uintptr(unsafe.Pointer(&n)), uintptr(d.handle))
	return n, check("cuDeviceTotalMem_v2", d.Ordinal, r)
}

// UUID returns the device's 16-byte UUID formatted as GPU-xxxxxxxx-xxxx-....
func (d Device) UUID() (string, error) {
	var u [16]byte
	if cuda.cuDeviceGetUuid_v2 == 0 {
		return "", &CallError{Func: "cuDeviceGetUuid_v2", Device: d.Ordinal, Result: ErrNotSupported}
	}
	r := invoke("cuDeviceGetUuid_v2", cuda.cuDeviceGetUuid_v2, uintptr(unsafe.Pointer(&u[0])), uintptr(d.handle))
	if err := check("cuDeviceGetUuid_v2", d.Ordinal, r); err != nil {
		return "", err
	}
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16]), nil
}

// PCIBusID returns the PCI id as "domain:bus:device.function".
func (d Device) PCIBusID() (string, error) {
	buf := make([]byte, 64)
	r := invoke("cuDeviceGetPCIBusId", cuda.cuDeviceGetPCIBusId, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(d.handle))
	if err := check("cuDeviceGetPCIBusId", d.Ordinal, r); err != nil {
		return "", err
	}
	return goString(&buf[0]), nil
}

// CanAccessPeer reports whether d can directly address peer's memory.
func (d Device) CanAccessPeer(peer Device) (bool, error) {
	var v int32
	r := invoke("cuDeviceCanAccessPeer", cuda.cuDeviceCanAccessPeer, uintptr(unsafe.Pointer(&v)), uintptr(d.handle), uintptr(peer.handle))
	return v != 0, check("cuDeviceCanAccessPeer", d.Ordinal, r)
}
