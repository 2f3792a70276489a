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
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rayd-go/rayd"
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

// evidenceHeader is the common part of a hardening evidence record.
type evidenceHeader struct {
	Commit  string   `json:"commit"`
	Date    string   `json:"date"`
	Devices []string `json:"devices"`
	Go      string   `json:"go"`
}

func header(t *testing.T, ords []int) evidenceHeader {
	h := evidenceHeader{Commit: os.Getenv("RAYD_COMMIT"), Date: time.Now().UTC().Format(time.RFC3339), Go: runtime.Version()}
	for _, o := range ords {
		info, err := launch.DeviceInfo(o)
		require.NoError(t, err)
		h.Devices = append(h.Devices, info.Name)
	}
	return h
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
