// Package gpumark is the marker a GPU-tier test leaves in its own output so
// that a harness reading the test binary's -test.v=test2json stream can
// tell GPU work from CPU work, and a deferred test from a skipped one.
//
// The marker is a test attribute (testing.TB.Attr), printed as the framed
// line
//
//	=== ATTR  TestName rayd.gpu needs=2 state=deferred visible=1 build=<commit>[+dirty]
//
// needs is the number of devices the test asked for; state is one of
// "ran" (the devices were there and the test went on to GPU work),
// "deferred" (a driver and at least one device, but fewer than needs: the
// test skips and runs on a larger machine) and "unavailable" (no driver or
// no device); build is the test binary's own build stamp (package
// buildinfo), so the harness can check that every suite was built from the
// commit it records.
//
// internal/gputest emits the marker for MustHaveDevices; tests that gate
// themselves another way (a package that internal/gputest cannot be
// imported into) call Mark directly. Place in the package graph: a leaf
// over internal/buildinfo, imported by tests and the gpuaccept harness.
package gpumark

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/rayd-go/rayd/internal/buildinfo"
)

// Key is the attribute key of the marker.
const Key = "rayd.gpu"

// State says what became of a GPU-gated test at its gate.
type State string

// The states of a gate.
const (
	Ran         State = "ran"
	Deferred    State = "deferred"
	Unavailable State = "unavailable"
)

// ErrMalformed is returned by Parse for a value that is not a marker.
var ErrMalformed = errors.New("gpumark: malformed marker")

// Marker is one gate passed (or not) by a test.
type Marker struct {
	Needs   int    // devices the test asked for (≥ 1)
	State   State  // ran, deferred or unavailable
	Visible int    // devices visible at the gate
	Build   string // the test binary's stamp, buildinfo.Stamp.String()
}

// String is the attribute value.
func (m Marker) String() string {
	return fmt.Sprintf("needs=%d state=%s visible=%d build=%s", m.Needs, m.State, m.Visible, m.Build)
}

// Parse reads an attribute value written by String.
func Parse(v string) (Marker, error) {
	var m Marker
	seen := map[string]bool{}
	for _, f := range strings.Fields(v) {
		k, val, ok := strings.Cut(f, "=")
		if !ok {
			return Marker{}, fmt.Errorf("%w: %q", ErrMalformed, v)
		}
		seen[k] = true
		var err error
		switch k {
		case "needs":
			m.Needs, err = strconv.Atoi(val)
		case "visible":
			m.Visible, err = strconv.Atoi(val)
		case "state":
			m.State = State(val)
		case "build":
			m.Build = val
		}
		if err != nil {
			return Marker{}, fmt.Errorf("%w: %q: %v", ErrMalformed, v, err)
		}
	}
	if !seen["needs"] || !seen["state"] || !seen["build"] || m.Needs < 1 {
		return Marker{}, fmt.Errorf("%w: %q", ErrMalformed, v)
	}
	switch m.State {
	case Ran, Deferred, Unavailable:
	default:
		return Marker{}, fmt.Errorf("%w: unknown state in %q", ErrMalformed, v)
	}
	return m, nil
}

// Mark records on t that it reached a GPU gate needing needs devices with
// visible of them present, in state st, stamped with this binary's build.
func Mark(t testing.TB, needs, visible int, st State) {
	t.Helper()
	t.Attr(Key, Marker{Needs: needs, State: st, Visible: visible, Build: buildinfo.Get().String()}.String())
}

// DeferReason is the skip message of a deferred test; the harness reads
// the marker, people read this.
func DeferReason(needs, visible int) string {
	return fmt.Sprintf("deferred: needs %d devices, %d visible", needs, visible)
}
