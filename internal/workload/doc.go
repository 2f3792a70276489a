// Package workload generates the benchmark and test inputs of the
// multi-device benchmark (multidevice spec §10.1): the flat grid mesh, the
// random triangle cloud, the plane and volume ray batches, and the two named
// configurations Light (transfer-bound) and Compute (compute-bound).
//
// Geometry and rays are produced on the host, deterministically: the same
// arguments give the same bits in every run of a given build. RayD draws its
// random numbers with torch's CPU generator, whose exact bit stream cannot be
// reproduced here; this package uses math/rand/v2's PCG seeded with the same
// seeds instead, so the distributions match RayD's but the values do not.
// The grid mesh involves no randomness and follows RayD's vertex and face
// order exactly.
//
// workload is internal: it serves tests, examples and the benchmark command.
// It imports geom and the standard library only.
package workload
