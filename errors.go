package rayd

import (
	"errors"

	"github.com/rayd-go/rayd/geom"
	"github.com/rayd-go/rayd/internal/engine"
	"github.com/rayd-go/rayd/launch"
)

var (
	// ErrClosed is returned by every method of a closed Scene.
	ErrClosed = errors.New("rayd: scene is closed")
	// ErrInvalidMesh matches every mesh validation error (*geom.MeshError
	// names the mesh, the field and the index).
	ErrInvalidMesh = geom.ErrInvalidMesh
	// ErrNoMeshes is returned by NewScene without meshes.
	ErrNoMeshes = geom.ErrNoMeshes
	// ErrLength matches every length mismatch between query inputs
	// (*geom.LengthError names the field and both lengths).
	ErrLength = geom.ErrLength
	// ErrInvalidArgument matches bad scalar arguments (negative bounces,
	// unknown flags, a static mesh given to UpdateVertices, ...).
	ErrInvalidArgument = geom.ErrInvalidArgument
	// ErrWrongDevice is returned when a device buffer belongs to another
	// device than the scene's.
	ErrWrongDevice = launch.ErrWrongDevice
	// ErrBackendUnavailable is returned when the requested backend cannot
	// run here (for example BackendCUDA without a driver), or when the fast
	// device path is used on the CPU backend.
	ErrBackendUnavailable = engine.ErrBackendUnavailable
	// ErrUnsupported matches every operation a scene's engine cannot run
	// (an *UnsupportedError names the engine and the operation). No engine
	// answers through another backend instead.
	ErrUnsupported = engine.ErrUnsupported
)

// UnsupportedError is the refusal of an operation by a scene's engine.
type UnsupportedError = engine.UnsupportedError

// ErrTooLarge matches a request whose result (or working memory) cannot fit
// in the memory it needs, refused before anything is allocated; the
// *AllocationError names what and how many bytes were asked for.
var ErrTooLarge = geom.ErrTooLarge

// AllocationError is a refused allocation sized by caller input.
type AllocationError = geom.AllocationError

// MaxBounces is the largest maxBounces of TraceReflections,
// AllocReflections and AccumulateReflections.
const MaxBounces = geom.MaxBounces
