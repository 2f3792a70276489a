package driver

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/ebitengine/purego"
)

// ErrNoDriver is returned (wrapped in a *LoadError) when a required NVIDIA
// library cannot be opened: on a machine without a GPU driver this is what
// every GPU entry point reports.
var ErrNoDriver = errors.New("rayd/driver: NVIDIA driver library not found")

// ErrMissingSymbol reports that a library was opened but lacks a required
// symbol (an older driver than the one rayd-go needs).
var ErrMissingSymbol = errors.New("rayd/driver: required symbol missing")

// LoadError describes a failed library load: which library, every path tried
// and why each failed, or which required symbols were absent.
type LoadError struct {
	Library string   // logical name, e.g. "libcuda"
	EnvVar  string   // environment variable that overrides the path
	Tried   []string // every path passed to dlopen, in order
	Causes  []string // dlopen's message per path (same length as Tried)
	Missing []string // required symbols that did not resolve
}

func (e *LoadError) Error() string {
	var b strings.Builder
	if len(e.Missing) > 0 {
		fmt.Fprintf(&b, "%s: missing required symbols %s", e.Library, strings.Join(e.Missing, ", "))
		return b.String()
	}
	fmt.Fprintf(&b, "%s: cannot load (set %s to its path); tried:", e.Library, e.EnvVar)
	for i, p := range e.Tried {
		fmt.Fprintf(&b, "\n  %s: %s", p, e.Causes[i])
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNoDriver) / ErrMissingSymbol work.
func (e *LoadError) Is(target error) bool {
	if len(e.Missing) > 0 {
		return target == ErrMissingSymbol
	}
	return target == ErrNoDriver
}

// symbol is one entry of a library's explicit symbol list.
type symbol struct {
	name     string
	ptr      *uintptr
	required bool
}

// library is a lazily opened shared object with an explicit symbol list.
type library struct {
	name       string   // logical name used in errors
	envVar     string   // path override
	candidates []string // default dlopen names/paths, in order

	once   sync.Once
	handle uintptr
	path   string   // the path that opened
	absent []string // optional symbols that did not resolve
	err    error
}

// open dlopens the library and resolves syms; it runs once per library.
func (l *library) open(syms []symbol) error {
	l.once.Do(func() { l.err = l.load(syms) })
	return l.err
}

func (l *library) paths() []string {
	if v := strings.TrimSpace(os.Getenv(l.envVar)); v != "" {
		return []string{v}
	}
	return l.candidates
}

func (l *library) load(syms []symbol) error {
	le := &LoadError{Library: l.name, EnvVar: l.envVar}
	for _, p := range l.paths() {
		h, err := purego.Dlopen(p, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			le.Tried = append(le.Tried, p)
			le.Causes = append(le.Causes, err.Error())
			continue
		}
		l.handle, l.path = h, p
		break
	}
	if l.handle == 0 {
		return le
	}
	for _, s := range syms {
		addr, err := purego.Dlsym(l.handle, s.name)
		if err != nil || addr == 0 {
			if s.required {
				le.Missing = append(le.Missing, s.name)
			} else {
				l.absent = append(l.absent, s.name)
			}
			continue
		}
		*s.ptr = addr
	}
	if len(le.Missing) > 0 {
		le.Tried = []string{l.path}
		le.Causes = []string{"opened"}
		return le
	}
	return nil
}

// LibraryInfo reports how a library was loaded, for diagnostics (rayd info).
type LibraryInfo struct {
	Name           string   // logical name
	Path           string   // path that dlopen accepted ("" if not loaded)
	MissingOptions []string // optional symbols this driver lacks
	Err            error    // load error, nil when loaded
}

func (l *library) info() LibraryInfo {
	return LibraryInfo{Name: l.name, Path: l.path, MissingOptions: append([]string(nil), l.absent...), Err: l.err}
}

// defaultPaths lists the usual places of an NVIDIA user-space library.
func defaultPaths(soname string) []string {
	return []string{
		soname,
		"/usr/lib/x86_64-linux-gnu/" + soname,
		"/usr/local/nvidia/lib64/" + soname,
		"/usr/lib64/" + soname,
		"/usr/lib/wsl/lib/" + soname,
	}
}
