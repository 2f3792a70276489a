// Package multidevice runs the multi-device benchmark behind `rayd bench`
// (multidevice spec §10, seed §5): the light and compute configurations,
// each per_ray operation timed on one GPU and on the replicated scene in
// interleaved rounds (minimum over rounds, every round kept), bitwise
// agreement of the results, calibrated rows, the chunked + offload row with
// measured peak memory, the accum_dfr_direct row, the measured link speed of
// every directed device pair and the overlap model. It fills a
// benchmarks.Record; package benchmarks validates, prints and plots it.
//
// Every time is taken with CUDA events on a stream of the first device
// after every device was synchronized, around a call that returns once its
// results are in place, so it measures what a caller waits for. Without a
// GPU, RunCPU runs the CPU reference on a small built-in scene instead.
package multidevice
