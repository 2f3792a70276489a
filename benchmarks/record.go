package benchmarks

import "github.com/rayd-go/rayd/calibrate"

// SchemaVersion is the version of the multi-device benchmark record.
const SchemaVersion = 1

// BenchmarkName is the record's "benchmark" value.
const BenchmarkName = "rayd_multi_device"

// Provenance kinds.
const (
	// ProvenanceLive marks a record measured by the run that wrote it.
	ProvenanceLive = "live_measurement"
	// ProvenanceHistorical marks a record transcribed from a published
	// run, not executed when it was committed.
	ProvenanceHistorical = "historical_documentation_import"
)

// Record is one run of the multi-device benchmark (schema version 1): what
// was run, on which machine, and every row it measured.
type Record struct {
	SchemaVersion int               `json:"schema_version"`
	Benchmark     string            `json:"benchmark"`
	Provenance    Provenance        `json:"provenance"`
	Parameters    Parameters        `json:"parameters"`
	Machine       Machine           `json:"machine"`
	Configs       map[string]Config `json:"configs"`
}

// Provenance says where a record's numbers come from. A live run sets Kind,
// GeneratedAt and, when known, Commit and PTXManifestSHA256.
type Provenance struct {
	Kind              string   `json:"kind"`
	GeneratedAt       string   `json:"generated_at"`
	MeasuredAt        string   `json:"measured_at,omitempty"`
	SourceDocuments   []string `json:"source_documents,omitempty"`
	Statement         string   `json:"statement,omitempty"`
	Commit            string   `json:"commit,omitempty"`
	PTXManifestSHA256 string   `json:"ptx_manifest_sha256,omitempty"`
}

// Parameters are the command-line choices of the run.
type Parameters struct {
	SelectedConfigs    []string `json:"selected_configs"`
	Devices            []int    `json:"devices,omitempty"`
	Warmup             int      `json:"warmup"`
	Repeat             int      `json:"repeat"`
	CalibrationRays    int      `json:"calibration_rays"`
	CalibrationRepeats int      `json:"calibration_repeats"`
	CalibrationMode    string   `json:"calibration_mode,omitempty"`
	AccumOnly          bool     `json:"accum_only"`
	Rays               int      `json:"rays,omitempty"`
	AccumSamples       int      `json:"accum_samples,omitempty"`
	Backend            string   `json:"backend,omitempty"`
}

// Machine describes the devices the run used.
type Machine struct {
	DeviceCount int          `json:"device_count"`
	Devices     []DeviceInfo `json:"devices"`
	// Torch is the PyTorch version of a historical RayD record; empty here.
	Torch string `json:"torch,omitempty"`
	// Go is the Go runtime version of the binary.
	Go string `json:"go,omitempty"`
	// CUDA is the CUDA driver API version ("13.0"), or "none".
	CUDA string `json:"cuda"`
	// Driver is the NVIDIA driver version, when known.
	Driver     string     `json:"driver,omitempty"`
	PeerAccess PeerAccess `json:"peer_access"`
	// D2DGBps is the measured copy speed devices[0] → devices[1] in GiB/s
	// (256 MiB, min of 5 after one discarded copy).
	D2DGBps float64 `json:"d2d_gbps,omitempty"`
	// Links is the measured copy speed of every directed device pair.
	Links []Link `json:"links,omitempty"`
}

// DeviceInfo is one device of the run.
type DeviceInfo struct {
	Index             int    `json:"index"`
	Name              string `json:"name"`
	TotalBytes        int64  `json:"total_bytes,omitempty"`
	ComputeCapability []int  `json:"compute_capability,omitempty"`
}

// Peer-access statuses.
const (
	PeerMeasured          = "measured"
	PeerPartiallyRecorded = "partially_recorded"
	PeerNotApplicable     = "not_applicable"
)

// PeerAccess is the peer-access matrix: every ordered pair of a live run.
type PeerAccess struct {
	Status             string     `json:"status"`
	AllPairsAccessible *bool      `json:"all_pairs_accessible,omitempty"`
	Pairs              []PeerPair `json:"pairs"`
}

// PeerPair is cuDeviceCanAccessPeer for one ordered pair.
type PeerPair struct {
	Source      int  `json:"source"`
	Destination int  `json:"destination"`
	CanAccess   bool `json:"can_access"`
}

// Link is the measured copy speed of one directed pair, in GiB/s.
type Link struct {
	Source      int     `json:"source"`
	Destination int     `json:"destination"`
	GBps        float64 `json:"gbps"`
}

// Config is one configuration's rows. The row keys are the JSON names of
// the operation rows; AccumDfrDirect is always present.
type Config struct {
	Note       string `json:"note"`
	Triangles  int    `json:"triangles,omitempty"`
	Rays       int    `json:"rays,omitempty"`
	MaxBounces int    `json:"max_bounces,omitempty"`

	Intersect                  *Row `json:"intersect,omitempty"`
	TraceReflections           *Row `json:"trace_reflections,omitempty"`
	IntersectCalibrated        *Row `json:"intersect_calibrated,omitempty"`
	TraceReflectionsCalibrated *Row `json:"trace_reflections_calibrated,omitempty"`
	AccumDfrDirect             *Row `json:"accum_dfr_direct"`
	AccumDfrDirectCalibrated   *Row `json:"accum_dfr_direct_calibrated,omitempty"`
	IntersectOffload           *Row `json:"intersect_offload,omitempty"`
}

// Row is one measured operation: the single-device and multi-device times
// (minimum over the timed rounds, every round kept), the dispatch the layer
// chose, and the correctness figure.
type Row struct {
	Batch          string    `json:"batch"`
	SingleMS       float64   `json:"single_ms"`
	SingleRoundsMS []float64 `json:"single_rounds_ms,omitempty"`
	NsPerRaySingle float64   `json:"ns_per_ray_single,omitempty"`

	MultiMS       *float64  `json:"multi_ms,omitempty"`
	MultiRoundsMS []float64 `json:"multi_rounds_ms,omitempty"`
	Speedup       *float64  `json:"speedup,omitempty"`
	OverheadMS    *float64  `json:"overhead_ms,omitempty"`
	Devices       int       `json:"devices,omitempty"`

	Dispatch string `json:"dispatch,omitempty"`
	// Path is the transfer path of the multi-device call's remote rows
	// ("peer-direct", "compact", "copy"; empty when every row ran on the
	// master or the layer did not say).
	Path string `json:"path,omitempty"`
	// DriverCalls is the number of driver calls of the multi-device call
	// as the layer counted them (context binds excluded); 0 when not
	// counted.
	DriverCalls      int64  `json:"driver_calls,omitempty"`
	ChunkSource      string `json:"chunk_source,omitempty"`
	ChunkRows        int    `json:"chunk_rows,omitempty"`
	ChunkCount       int    `json:"chunk_count,omitempty"`
	RowBytes         int    `json:"row_bytes,omitempty"`
	MeasuredRowBytes int    `json:"measured_row_bytes,omitempty"`

	BitwiseAgreement      *float64 `json:"bitwise_agreement,omitempty"`
	RelativeGridDeviation *float64 `json:"relative_grid_deviation,omitempty"`
	DirectSamples         int      `json:"direct_samples,omitempty"`

	// Overlap is the §5.2 model of a chunked or pipelined row.
	Overlap *Overlap `json:"overlap,omitempty"`

	// Calibrated rows.
	Weights          []float64         `json:"weights,omitempty"`
	ProbeSeconds     []float64         `json:"probe_seconds,omitempty"`
	CandidateWeights [][]float64       `json:"candidate_weights,omitempty"`
	CandidateMS      []float64         `json:"candidate_ms,omitempty"`
	Describe         string            `json:"describe,omitempty"`
	Calibration      *calibrate.Record `json:"calibration,omitempty"`
	Margin           *Margin           `json:"margin,omitempty"`

	// Offload row.
	RowsOffloaded               int         `json:"rows_offloaded,omitempty"`
	ChunksOffloaded             int         `json:"chunks_offloaded,omitempty"`
	MasterPeakBytesStreamed     int64       `json:"master_peak_bytes_streamed,omitempty"`
	MasterPeakBytesConcatenated int64       `json:"master_peak_bytes_concatenated,omitempty"`
	PeakMemory                  *PeakMemory `json:"peak_memory,omitempty"`

	// Scaling holds the multi-device figures of every device count between
	// 2 and the full set (exclusive) when more than two devices ran.
	Scaling []Scale `json:"scaling,omitempty"`
}

// Scale is a row measured on the first Devices devices.
type Scale struct {
	Devices    int     `json:"devices"`
	MultiMS    float64 `json:"multi_ms"`
	Speedup    float64 `json:"speedup"`
	Dispatch   string  `json:"dispatch,omitempty"`
	ChunkCount int     `json:"chunk_count,omitempty"`
}

// Overlap is the overlap model of one chunked row (multidevice spec §10.4):
// where the measured time sits between no overlap and perfect overlap.
type Overlap struct {
	TripBytes     int     `json:"trip_bytes"`
	ChunkTripMS   float64 `json:"chunk_trip_ms"`
	SerialBoundMS float64 `json:"serial_bound_ms"`
	PipeBoundMS   float64 `json:"pipe_bound_ms"`
	ResidualMS    float64 `json:"residual_ms"`
}

// Margin reads a calibration against the master alone (spec §10.5).
type Margin struct {
	MasterOnlyMS    float64 `json:"master_only_ms"`
	BestShardedMS   float64 `json:"best_sharded_ms"`
	Sharded         bool    `json:"sharded"`
	MarginPct       float64 `json:"margin_pct"`
	KeptOnTolerance bool    `json:"kept_on_tolerance"`
	NearCrossover   bool    `json:"near_crossover"`
}

// Peak-memory statuses.
const (
	PeakMeasured    = "measured"
	PeakNotRecorded = "not_recorded"
)

// PeakMemory is the offload row's measured peak allocation.
type PeakMemory struct {
	Status                 string        `json:"status"`
	MasterDeviceIndex      *int          `json:"master_device_index,omitempty"`
	StreamedBytes          *int64        `json:"streamed_bytes,omitempty"`
	ConcatenatedBytes      *int64        `json:"concatenated_bytes,omitempty"`
	PerDeviceStreamedBytes []DeviceBytes `json:"per_device_streamed_bytes,omitempty"`
}

// DeviceBytes is a byte count on one device.
type DeviceBytes struct {
	DeviceIndex int   `json:"device_index"`
	Bytes       int64 `json:"bytes"`
}
