package ptx

import (
	"testing"
)

// FuzzParseManifest: arbitrary bytes give a manifest or an error, and an
// accepted manifest round-trips through Encode.
func FuzzParseManifest(f *testing.F) {
	good, _ := embedded.ReadFile("manifest.json")
	f.Add(good)
	f.Add([]byte(`{"schema_version":1,"modules":[]}`))
	f.Add([]byte(`{"schema_version":1,"modules":[{"name":"a","file":"a.ptx"},{"name":"a","file":"b.ptx"}]}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseManifest(b)
		if err != nil {
			return
		}
		enc, err := m.Encode()
		if err != nil {
			t.Fatalf("accepted manifest does not encode: %v", err)
		}
		m2, err := ParseManifest(enc)
		if err != nil || len(m2.Modules) != len(m.Modules) {
			t.Fatalf("round trip failed: %v", err)
		}
		for _, rec := range m.Modules {
			if _, err := m.Module(rec.Name); err != nil {
				t.Fatalf("module %q not found after parse", rec.Name)
			}
		}
	})
}

// FuzzParsePTX: arbitrary text gives entries or an error, never a panic;
// every parsed parameter has a positive size and alignment.
func FuzzParsePTX(f *testing.F) {
	img, _ := embedded.ReadFile("basic.ptx")
	f.Add(img)
	f.Add([]byte(samplePTX))
	f.Add([]byte(".version 9.0\n.target sm_90\n.visible .entry k(\n.param .align 8 .b8 p[0x10]\n)\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, entries, err := ParsePTX(b)
		if err != nil {
			return
		}
		for _, e := range entries {
			for _, p := range e.Params {
				if p.Size <= 0 || p.Align <= 0 || p.Type == "" {
					t.Fatalf("entry %s: bad parameter %+v", e.Name, p)
				}
			}
		}
	})
}

// FuzzParseKernelSignatures: arbitrary CUDA-ish text never panics.
func FuzzParseKernelSignatures(f *testing.F) {
	f.Add([]byte(`extern "C" __global__ void __launch_bounds__(256) k(const float* x, int n) {}`))
	f.Add([]byte(`/* unterminated __global__ void k(int a`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for name, ps := range ParseKernelSignatures(b) {
			if name == "" {
				t.Fatal("empty kernel name")
			}
			_ = ps
		}
	})
}
