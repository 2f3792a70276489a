// Package rf is the float64 CPU reference of rayd-go's RF operations: the
// diffraction accumulations accum_dfr_direct and accum_dfr_coherent_direct,
// the reflection accumulation accumulate_reflections and the first-order
// diffraction path export trace_dfr_paths, with the gradient of
// accum_dfr_direct. It is the oracle the device kernels are tested against
// and defines, in Go, the exact random sequence and lane mapping those
// kernels must reproduce.
//
// # Semantics
//
// The operations follow the operation contract (§6, §7): the validation
// rules and messages, the lane spaces and windows, the counters and the
// order of the launch passes are RayD's. Inputs that are float32 tensors on
// the device (states, materials, rays, positions) are float32 here and are
// widened once; scalar options are float64; every computation is float64.
// Ray casts go through a Scene in float32, exactly as on the device, with the
// biases of the contract: diffraction segments start 1e-4 along the segment
// and stop 2e-4 short (segments of at most 1e-5 are visible), multipath
// traces use tmin 1e-5, reflection re-launches are offset along the normal.
//
// # Random numbers and lanes (bit-exact device contract)
//
// All randomness is integer arithmetic on uint32 (wrap-around products):
//
//	Hash(x):  x ^= x>>16; x *= 0x7feb352d; x ^= x>>15; x *= 0x846ca68b; x ^= x>>16
//	U(g, stream, seed) = (Hash(g ^ stream·0x9e3779b9 ^ seed) & 0xFFFFFF) · 2⁻²⁴
//
// accum_dfr_direct: global lane g ∈ [0, D+K+X) — direct for g < D, Keller
// for g < D+K, suffix otherwise; state g mod S; cell (g div S) mod C; edge
// parameter U(g, 0, seed); Keller angle 2π·U(g, 1, seed); suffix face
// Hash(g ^ 17·0x9e3779b9 ^ seed) mod (number of valid faces).
// accum_dfr_coherent_direct: g ∈ [0, S·C), state g mod S, cell g div S.
// trace_dfr_paths: g ∈ [0, T·R·M), state g mod M, receiver (g div M) mod R,
// transmitter (g div M) div R. A window (LaneOffset, LaneCount) runs global
// lanes [offset, offset+count) keyed by their global index, so any partition
// of the lane space into windows reproduces the full launch.
//
// # Scenes
//
// Operations take a Scene: face count, triangle vertices, any-hit and
// closest-hit queries. TablesScene answers them by brute force over
// geom.Tables with geom.Watertight; the BVH scene of package ref answers the
// same queries identically and fits behind a few-line adapter (its Closest
// returns a ref.Hit; copy its fields into a Hit). A nil Scene is empty space.
//
// # Bounded work and validation
//
// Every result sized by the caller is checked before it is allocated: the
// grids (AccumCellBytes or CoherentCellBytes per cell), the wedge buffer
// (WedgeEventBytes per slot) and the path export (PathRowBytes per row)
// must fit in geom.HostMemoryLimit(), else the operation returns a
// *geom.AllocationError (errors.Is geom.ErrTooLarge); accumulate_reflections
// also refuses max_bounces above geom.MaxBounces. ValidateAccumDfrDirect,
// ValidateAccumDfrCoherentDirect, ValidateAccumulateReflections and
// ValidateTraceDfrPaths run an operation's whole validation, in its order
// and with its errors, without tracing or allocating: device
// implementations call them before they allocate anything.
//
// # Sources of the physics
//
// The diffraction weight, Keller-cone and suffix sampling, Fresnel
// reflection and UTD conventions restate RayD's (concepts taken from its
// contract and sources, code written here). The UTD operator is built from
// the Kouyoumjian–Pathak coefficient with an exactly evaluated transition
// function (series and continued fraction of the Fresnel integral, where
// RayD uses Boersma's approximation); its tests check the physical
// invariants — continuity across shadow and reflection boundaries,
// reciprocity and the half-plane GTD limit.
package rf
