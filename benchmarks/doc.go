// Package benchmarks holds the record of the multi-device benchmark
// (`rayd bench`, multidevice spec §10): its Go types, the versioned JSON
// Schema it is validated against (multi_device_result.schema.json, embedded),
// the manifest that pins the schema and the committed evidence files by
// SHA-256, the printed table with its overlap and calibration lines, the
// stability summary over repeated runs and the speedup plot.
//
// It measures nothing: package benchmarks/multidevice runs the benchmark on
// the GPUs and fills a Record. Everything here is pure Go and tested without
// a GPU.
package benchmarks
