package rayd_test

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
	"github.com/rayd-go/rayd/internal/evidence"
	"github.com/rayd-go/rayd/launch"
)

// envInt reads a positive integer knob of the hardening tests (their
// defaults keep the GPU suites short; `make gpu-harden` raises them).
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// writeEvidence writes v as JSON to $RAYD_EVIDENCE_DIR/name when the
// variable is set (the hardening runs of `make gpu-harden`).
func writeEvidence(t *testing.T, name string, v any) {
	dir := os.Getenv("RAYD_EVIDENCE_DIR")
	if dir == "" {
		return
	}
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644))
}

// evidenceHeader is the common part of a hardening evidence record: the
// evidence head (this test binary's build stamp, date, driver, devices, PTX
// digests) and the Go version.
type evidenceHeader struct {
	evidence.Header
	Go string `json:"go"`
}

func header(t *testing.T, ords []int) evidenceHeader {
	h, err := evidence.New(ords)
	require.NoError(t, err)
	return evidenceHeader{Header: h, Go: runtime.Version()}
}

// progress is the soak's watchdog state: when each worker last started an
// iteration, and which workers have returned.
type progress struct {
	last []atomic.Int64 // UnixNano of the last iteration's start
	done []atomic.Bool
}

func newProgress(workers int, now time.Time) *progress {
	p := &progress{last: make([]atomic.Int64, workers), done: make([]atomic.Bool, workers)}
	for w := range workers {
		p.last[w].Store(now.UnixNano())
	}
	return p
}

func (p *progress) beat(w int, now time.Time) { p.last[w].Store(now.UnixNano()) }
func (p *progress) finish(w int)              { p.done[w].Store(true) }

// hung lists the workers still running whose last iteration started more
// than limit before now.
func (p *progress) hung(now time.Time, limit time.Duration) []int {
	var out []int
	for w := range p.last {
		if !p.done[w].Load() && now.Sub(time.Unix(0, p.last[w].Load())) > limit {
			out = append(out, w)
		}
	}
	return out
}

// memProbe reads each device's used memory (total − free, cuMemGetInfo)
// after returning the stream-ordered pool's reserve, through devices the
// test holds open for its whole duration.
type memProbe struct{ devs []*launch.Device }

func newMemProbe(t *testing.T, ords []int) *memProbe {
	p := &memProbe{}
	for _, o := range ords {
		d, err := launch.Open(o)
		require.NoError(t, err)
		t.Cleanup(func() { _ = d.Close() })
		p.devs = append(p.devs, d)
	}
	return p
}

func (p *memProbe) used(t *testing.T) []int64 {
	var out []int64
	for _, d := range p.devs {
		require.NoError(t, d.Synchronize())
		require.NoError(t, d.TrimPool())
		free, total, err := d.MemInfo()
		require.NoError(t, err)
		out = append(out, int64(total)-int64(free))
	}
	return out
}

// maxDelta is the largest per-device growth of used over base.
func maxDelta(base, used []int64) int64 {
	var m int64
	for i := range base {
		m = max(m, used[i]-base[i])
	}
	return m
}

// fingerprintOf hashes the bits of query results, so that two runs can be
// compared for exact equality.
func fingerprintOf(parts ...any) string {
	s := sha256.New()
	var b [8]byte
	for _, p := range parts {
		switch v := p.(type) {
		case []float32:
			for _, x := range v {
				binary.LittleEndian.PutUint32(b[:4], math.Float32bits(x))
				s.Write(b[:4])
			}
		case []int32:
			for _, x := range v {
				binary.LittleEndian.PutUint32(b[:4], uint32(x))
				s.Write(b[:4])
			}
		case []float64:
			for _, x := range v {
				binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
				s.Write(b[:])
			}
		case []bool:
			for _, x := range v {
				if x {
					s.Write([]byte{1})
				} else {
					s.Write([]byte{0})
				}
			}
		case *rayd.Hits:
			s.Write([]byte(fingerprintOf(v.T, v.PrimID, v.Bary)))
		case *rayd.Reflections:
			s.Write([]byte(fingerprintOf(v.T, v.PrimIDs, v.Valid)))
		default:
			panic("fingerprint: unsupported part")
		}
	}
	return hex.EncodeToString(s.Sum(nil))
}

// TestSoakWatchdogFlagsOnlyStalledWorkers: a worker is hung when it is
// still running and its last iteration started more than the limit ago; a
// worker that returned is never hung, however long ago it last beat.
func TestSoakWatchdogFlagsOnlyStalledWorkers(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := newProgress(3, t0)
	p.beat(1, t0.Add(50*time.Second))
	p.finish(2)
	require.Empty(t, p.hung(t0.Add(60*time.Second), time.Minute))
	require.Equal(t, []int{0}, p.hung(t0.Add(61*time.Second), time.Minute))
	require.Equal(t, []int{0, 1}, p.hung(t0.Add(111*time.Second), time.Minute))
	p.finish(0)
	require.Equal(t, []int{1}, p.hung(t0.Add(111*time.Second), time.Minute))
}
