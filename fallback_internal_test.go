package rayd

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// The CPU-fallback warning is logged once per process, not once per scene.
func TestFallbackWarnsOncePerProcess(t *testing.T) {
	fallbackOnce = sync.Once{}
	t.Cleanup(func() { fallbackOnce = sync.Once{} })
	var logs bytes.Buffer
	l := slog.New(slog.NewTextHandler(&logs, nil))
	tri := Mesh{Vertices: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, Faces: []int32{0, 1, 2}}
	for range 5 {
		s, err := NewScene(context.Background(), []Mesh{tri}, WithDevice(1<<20), WithLogger(l))
		if err != nil {
			t.Fatal(err)
		}
		if s.Backend() != BackendCPU {
			t.Fatalf("backend %s, want the CPU fallback", s.Backend())
		}
		_ = s.Close()
	}
	if n := strings.Count(logs.String(), "falling back to the CPU reference backend"); n != 1 {
		t.Fatalf("%d fallback warnings for 5 scenes, want 1:\n%s", n, logs.String())
	}
}
