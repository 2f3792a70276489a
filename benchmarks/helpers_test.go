package benchmarks

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd/calibrate"
)

// historicalPath is the committed baseline, relative to the package dir.
const historicalPath = "results/multi_device_2xa6000_20260727.json"

// repoRoot is the repository root seen from the package directory.
const repoRoot = ".."

func ptr[T any](v T) *T { return &v }

// loadHistorical decodes the committed baseline strictly.
func loadHistorical(t *testing.T) (*Record, []byte) {
	t.Helper()
	data, err := os.ReadFile(historicalPath)
	require.NoError(t, err)
	return decodeStrict(t, data), data
}

// decodeStrict decodes a record, rejecting unknown fields.
func decodeStrict(t *testing.T, data []byte) *Record {
	t.Helper()
	var r Record
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&r))
	return &r
}

// liveRecord is a synthetic live record with every field of record.go set.
func liveRecord() *Record {
	perRay := func(single, multi float64) *Row {
		return &Row{
			Batch: "1048576 rays", SingleMS: single, SingleRoundsMS: []float64{single, single + 0.1},
			NsPerRaySingle: single * 1e6 / 1048576,
			MultiMS:        ptr(multi), MultiRoundsMS: []float64{multi, multi + 0.2},
			Speedup: ptr(single / multi), OverheadMS: ptr(multi - single/2), Devices: 4,
			Dispatch: "pipelined", Path: "peer-direct", DriverCalls: 14, ChunkSource: "plan", ChunkRows: 131072, ChunkCount: 9,
			RowBytes: 76, MeasuredRowBytes: 76, BitwiseAgreement: ptr(1.0),
			Overlap: OverlapModel(single, multi, 1048576, 131072, 76, 40),
			Scaling: []Scale{
				{Devices: 2, MultiMS: multi * 1.6, Speedup: single / (multi * 1.6), Dispatch: "pipelined", ChunkCount: 5},
				{Devices: 3, MultiMS: multi * 1.2, Speedup: single / (multi * 1.2), Dispatch: "pipelined", ChunkCount: 7},
			},
		}
	}
	calibrated := perRay(9, 5)
	calibrated.Overlap = nil
	calibrated.Weights = []float64{1, 1, 1, 0.5}
	calibrated.ProbeSeconds = []float64{0.009, 0.0091, 0.009, 0.0095}
	calibrated.CandidateWeights = [][]float64{{1, 1, 1, 1}, {1, 1, 1, 0.5}, {1, 0, 0, 0}}
	calibrated.CandidateMS = []float64{5.2, 5.0, 9.1}
	calibrated.Describe = "intersect probe, 1048576 rows"
	calibrated.Margin = MarginOf(calibrated.CandidateWeights, calibrated.CandidateMS, calibrated.Weights)
	calibrated.Calibration = &calibrate.Record{
		Operation: "intersect", Rows: 1048576, Devices: []int{0, 1, 2, 3}, Mode: calibrate.ModeNoiseAware,
		Seconds: calibrated.ProbeSeconds, Samples: [][]float64{{0.009}, {0.0091}, {0.009}, {0.0095}},
		ThroughputWeights: []float64{1.01, 1, 1.01, 0.98}, Candidates: calibrated.CandidateWeights,
		CandidateSeconds: []float64{0.0052, 0.005, 0.0091}, CandidateSamples: [][]float64{{0.0052}, {0.005}, {0.0091}},
		Rounds: 3, Weights: calibrated.Weights, Chosen: 1, MarginPct: 45,
	}
	offload := perRay(9.5, 6)
	offload.Dispatch, offload.ChunkSource = "chunked", "chunk_rays"
	offload.RowsOffloaded, offload.ChunksOffloaded = 1048576, 8
	offload.MasterPeakBytesStreamed, offload.MasterPeakBytesConcatenated = 1<<26, 1<<28
	offload.PeakMemory = &PeakMemory{
		Status: PeakMeasured, MasterDeviceIndex: ptr(0), StreamedBytes: ptr(int64(1 << 26)),
		ConcatenatedBytes:      ptr(int64(1 << 28)),
		PerDeviceStreamedBytes: []DeviceBytes{{0, 1 << 26}, {1, 1 << 25}, {2, 1 << 25}, {3, 1 << 25}},
	}
	accum := &Row{
		Batch: "67108864 samples", SingleMS: 30, MultiMS: ptr(9.0), Speedup: ptr(30.0 / 9),
		OverheadMS: ptr(9.0 - 15), Dispatch: "lane-sharded", DriverCalls: 22, ChunkCount: 4,
		RelativeGridDeviation: ptr(3e-7), DirectSamples: 67108864,
	}
	cfg := Config{
		Note: "synthetic", Triangles: 2097152, Rays: 1048576, MaxBounces: 4,
		Intersect: perRay(9, 3), TraceReflections: perRay(25, 7.5),
		IntersectCalibrated: calibrated, TraceReflectionsCalibrated: perRay(25, 7.6),
		AccumDfrDirect: accum, AccumDfrDirectCalibrated: accum, IntersectOffload: offload,
	}
	cfg.TraceReflectionsCalibrated.Weights = []float64{1, 1, 1, 1}
	tru := true
	var pairs []PeerPair
	var links []Link
	for s := range 4 {
		for d := range 4 {
			if s != d {
				pairs = append(pairs, PeerPair{s, d, true})
				links = append(links, Link{s, d, 40 + float64(s)})
			}
		}
	}
	devices := make([]DeviceInfo, 4)
	for i := range devices {
		devices[i] = DeviceInfo{Index: i, Name: "NVIDIA H200", TotalBytes: 150 << 30, ComputeCapability: []int{9, 0}}
	}
	return &Record{
		SchemaVersion: SchemaVersion, Benchmark: BenchmarkName,
		Provenance: Provenance{Kind: ProvenanceLive, GeneratedAt: "2026-11-29T12:34:56.789Z", Commit: "0123abcd",
			PTXManifestSHA256: "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"},
		Parameters: Parameters{SelectedConfigs: []string{"compute"}, Devices: []int{0, 1, 2, 3}, Warmup: 2, Repeat: 7,
			CalibrationRays: 0, CalibrationRepeats: 3, CalibrationMode: "noise-aware", Rays: 1048576,
			AccumSamples: 67108864, Backend: "cuda"},
		Machine: Machine{DeviceCount: 4, Devices: devices, Go: "go1.26", CUDA: "13.0", Driver: "580.00",
			PeerAccess: PeerAccess{Status: PeerMeasured, AllPairsAccessible: &tru, Pairs: pairs},
			D2DGBps:    40, Links: links},
		Configs: map[string]Config{"compute": cfg},
	}
}

// singleDeviceRecord is a one-device live record (no pairs, no multi).
func singleDeviceRecord() *Record {
	return &Record{
		SchemaVersion: SchemaVersion, Benchmark: BenchmarkName,
		Provenance: Provenance{Kind: ProvenanceLive, GeneratedAt: "2026-11-29T00:00:00Z"},
		Parameters: Parameters{SelectedConfigs: []string{"light"}, Warmup: 2, Repeat: 7, CalibrationRepeats: 3},
		Machine: Machine{DeviceCount: 1, Devices: []DeviceInfo{{Index: 0, Name: "NVIDIA H200"}}, CUDA: "13.0",
			PeerAccess: PeerAccess{Status: PeerNotApplicable}},
		Configs: map[string]Config{"light": {
			Note:           "light",
			Intersect:      &Row{Batch: "4194304 rays", SingleMS: 1.2, Dispatch: "single-device"},
			AccumDfrDirect: &Row{Batch: "8192 samples", SingleMS: 0.3, Dispatch: "single-device"},
		}},
	}
}

// mutate decodes data, applies f to the generic document and re-encodes it.
func mutate(t *testing.T, data []byte, f func(doc map[string]any)) []byte {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	f(doc)
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}

// obj walks a generic document along keys.
func obj(doc map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		doc = doc[k].(map[string]any)
	}
	return doc
}

// copyTree copies the pinned files of the committed manifest under a new
// root and returns it.
func copyTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	m, err := ReadManifest(filepath.Join(repoRoot, ManifestPath))
	require.NoError(t, err)
	rels := []string{SchemaPath, ManifestPath}
	for _, r := range m.Records {
		rels = append(rels, r.Path)
	}
	for _, rel := range rels {
		data, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(rel)))
		require.NoError(t, err)
		dst := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		require.NoError(t, os.WriteFile(dst, data, 0o644))
	}
	return root
}
