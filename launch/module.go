package launch

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/ptx"
)

// EnvPTXJIT is the environment variable that forces every module to be
// JIT-compiled from its PTX even where a prebuilt cubin matches the device:
// RAYD_PTX_JIT=1 (or true). Empty, 0 or false leaves the choice to the
// device; any other value forces the PTX. A Device reads it when it opens.
const EnvPTXJIT = "RAYD_PTX_JIT"

// ErrNoImage is returned when a module has no image the device can load: no
// cubin for its architecture and a PTX that targets a newer one, or an
// OptiX module (which OptiXContext compiles, not cuModuleLoadDataEx).
var ErrNoImage = errors.New("launch: no loadable image")

// ImageKind is what a module was loaded from.
type ImageKind string

// The images a module loads from.
const (
	// ImageCubin is a prebuilt cubin for the device's architecture: the
	// driver loads it without compiling.
	ImageCubin ImageKind = "cubin"
	// ImagePTX is the module's PTX, JIT-compiled by the driver (or taken
	// from the driver's JIT cache).
	ImagePTX ImageKind = "ptx-jit"
)

// ModuleLoad says how one module came onto one device and what it cost.
type ModuleLoad struct {
	Seq     uint64    `json:"seq"`    // process-wide order of the load
	Ordinal int       `json:"device"` // device ordinal
	Module  string    `json:"module"`
	Image   ImageKind `json:"image"`
	Arch    string    `json:"arch"`        // the cubin's sm_XX, or the PTX's .target
	Device  string    `json:"device_arch"` // the device's sm_XX
	// Reason says why the PTX was JIT-compiled (empty for a cubin).
	Reason string `json:"reason,omitempty"`
	Bytes  int    `json:"image_bytes"` // bytes handed to the driver
	// Verify is reading the embedded image and checking its digests
	// (and decompressing a cubin); Load is cuModuleLoadDataEx (the JIT
	// included, for PTX).
	Verify time.Duration `json:"verify_ns"`
	Load   time.Duration `json:"load_ns"`
}

// Total is Verify + Load.
func (l ModuleLoad) Total() time.Duration { return l.Verify + l.Load }

// moduleEntry is one module loaded on one device (or the error of trying).
type moduleEntry struct {
	rec  *ptx.ModuleRecord
	mod  driver.Module
	load ModuleLoad
	err  error
}

// forcedJIT reads EnvPTXJIT through getenv.
func forcedJIT(getenv func(string) string) bool {
	v := strings.TrimSpace(getenv(EnvPTXJIT))
	if v == "" {
		return false
	}
	b, err := strconv.ParseBool(v)
	return err != nil || b
}

// PTXJITForced reports whether EnvPTXJIT forces PTX JIT in this process now
// (devices opened from now on follow it).
func PTXJITForced() bool { return forcedJIT(os.Getenv) }

// imageChoice is how a module is to be loaded on a device.
type imageChoice struct {
	cubin  bool
	arch   string // the cubin's architecture, or the PTX's target
	reason string // why the PTX (empty for a cubin)
}

// chooseImage picks rec's image for a device of architecture devArch
// (major*10+minor): the cubin of exactly that architecture unless forceJIT,
// else the PTX, which the driver can JIT-compile only for its target
// architecture or a newer one (exactly that one for an architecture-specific
// target such as sm_90a).
func chooseImage(rec *ptx.ModuleRecord, devArch int, forceJIT bool) (imageChoice, error) {
	dev := "sm_" + strconv.Itoa(devArch)
	if rec.Loader == ptx.LoaderOptiX {
		return imageChoice{}, fmt.Errorf("%w: module %s is an OptiX program (compiled by an OptiX context), not a CUDA module", ErrNoImage, rec.Name)
	}
	var reason string
	switch c, ok := rec.Cubin(dev); {
	case forceJIT:
		reason = EnvPTXJIT + " forces the PTX"
	case ok:
		return imageChoice{cubin: true, arch: c.Arch}, nil
	case len(rec.Cubins) == 0:
		reason = "no cubins embedded"
	default:
		archs := make([]string, len(rec.Cubins))
		for i, c := range rec.Cubins {
			archs[i] = c.Arch
		}
		reason = fmt.Sprintf("no cubin for %s (cubins: %s)", dev, strings.Join(archs, ", "))
	}
	target, specific, ok := ptx.ParseArch(rec.Target)
	if ok && (devArch < target || specific && devArch != target) {
		return imageChoice{}, fmt.Errorf("%w: module %s on %s: %s, and its PTX targets %s", ErrNoImage, rec.Name, dev, reason, rec.Target)
	}
	return imageChoice{arch: rec.Target, reason: reason}, nil
}

// module loads (once per device) the embedded module name: its cubin when
// one matches the device's architecture, else its PTX (see chooseImage),
// after package ptx has checked the image's digests. A cubin the driver
// refuses falls back to the PTX, with the refusal as the reason.
func (d *Device) module(name string) (*moduleEntry, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.modules == nil {
		return nil, ErrClosed
	}
	if m, ok := d.modules[name]; ok {
		return m, m.err
	}
	m := &moduleEntry{}
	m.err = d.loadModule(name, m)
	if m.err != nil {
		m.err = fmt.Errorf("launch: module %s on %v: %w", name, d, m.err)
	} else {
		recordLoad(&m.load)
	}
	d.modules[name] = m
	return m, m.err
}

// loadModule fills m with module name loaded on d. d.mu is held.
func (d *Device) loadModule(name string, m *moduleEntry) error {
	man, err := ptx.EmbeddedManifest()
	if err != nil {
		return err
	}
	if m.rec, err = man.Module(name); err != nil {
		return err
	}
	choice, err := chooseImage(m.rec, d.arch, d.forceJIT)
	if err != nil {
		return err
	}
	m.load = ModuleLoad{Ordinal: d.ordinal, Module: name, Device: "sm_" + strconv.Itoa(d.arch)}
	if choice.cubin {
		start := time.Now()
		cub, err := ptx.LoadCubin(name, choice.arch)
		if err != nil {
			return err // a cubin that fails its digests is refused, never replaced
		}
		m.load.Verify = time.Since(start)
		if err = d.driverLoad(m, cub.Image); err == nil {
			m.load.Image, m.load.Arch, m.load.Bytes = ImageCubin, choice.arch, len(cub.Image)
			return nil
		}
		choice = imageChoice{arch: m.rec.Target, reason: fmt.Sprintf("the driver refused the %s cubin: %v", choice.arch, err)}
	}
	start := time.Now()
	src, err := ptx.Load(name)
	if err != nil {
		return err
	}
	m.load.Verify += time.Since(start)
	if err := d.driverLoad(m, src.Image); err != nil {
		if choice.reason != "" {
			return fmt.Errorf("%w (PTX JIT after %s)", err, choice.reason)
		}
		return err
	}
	m.load.Image, m.load.Arch, m.load.Reason, m.load.Bytes = ImagePTX, choice.arch, choice.reason, len(src.Image)
	return nil
}

// driverLoad hands img to cuModuleLoadDataEx on d and adds the time to m.
func (d *Device) driverLoad(m *moduleEntry, img []byte) error {
	start := time.Now()
	err := d.with(func() error {
		var e error
		m.mod, e = driver.LoadModule(d.ordinal, img)
		return e
	})
	m.load.Load += time.Since(start)
	return err
}

// LoadModule loads module name on d now (Kernel loads on first use) and
// says how: cubin or PTX JIT, and the time it took. A module already
// loaded returns its first load's record.
func (d *Device) LoadModule(name string) (ModuleLoad, error) {
	m, err := d.module(name)
	if err != nil {
		return ModuleLoad{}, err
	}
	return m.load, nil
}

// ModuleLoads returns how each module loaded on d came there, in load
// order.
func (d *Device) ModuleLoads() []ModuleLoad {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []ModuleLoad
	for _, m := range d.modules {
		if m.err == nil {
			out = append(out, m.load)
		}
	}
	sortLoads(out)
	return out
}

// Arch returns the device's architecture name, e.g. "sm_90".
func (d *Device) Arch() string { return "sm_" + strconv.Itoa(d.arch) }

// ForcedJIT reports whether d loads every module from its PTX (EnvPTXJIT
// was set when d opened).
func (d *Device) ForcedJIT() bool { return d.forceJIT }
