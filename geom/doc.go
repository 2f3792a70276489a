// Package geom holds the host-side types and the exact arithmetic that every
// rayd-go layer shares: the constants of the operation contract, the RayFlags
// bit set, meshes and their validation, the scene-global index tables, the
// watertight ray/triangle test, the ray/box slab test and the structure-of-
// arrays result records of intersect, trace_reflections and closest points.
//
// geom sits at the bottom of the package graph: it imports only the standard
// library, and everything else (the CPU reference in ref, the device
// launchers, the public rayd package) builds on it. Its functions are written
// so that a CUDA kernel can transcribe them operation by operation and obtain
// bit-identical results; each such function documents its exact sequence of
// float32 operations.
//
// Conventions: vectors are stored row-major, three float32 values per row;
// ids are int32 with InvalidID (-1) for "none"; directions are never
// normalized, so every ray parameter t is measured in units of the given
// direction.
//
// # Non-finite rows
//
// The visibility operations split on a row with a NaN or infinite
// coordinate (operation spec §0.2, §4), and the split is part of the
// contract:
//
//   - visible (ref.Scene.Visible and the device kernels): the row is traced
//     unvalidated, finds no hit and is a miss, hence visible: true;
//   - visible_pair, visible_edge and visible_chain (VisiblePair,
//     VisibleEdge, VisibleChain): the row is treated as inactive, hence
//     false (and −1 for the chain's blocked segment and prim).
//
// So a NaN start is visible to Visible and not visible to VisiblePair.
// Callers that want one rule for both mask such rows themselves.
package geom
