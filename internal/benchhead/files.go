package benchhead

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
)

// WriteJSON writes v as indented JSON with a final newline to path,
// creating its directory.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// RelL2 is ‖want − got‖ / ‖want‖ over the first len(want) values (got
// must be at least as long), or ‖want − got‖ when want is zero.
func RelL2(want, got []float64) float64 {
	num, den := 0.0, 0.0
	for i := range want {
		d := want[i] - got[i]
		num += d * d
		den += want[i] * want[i]
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}
