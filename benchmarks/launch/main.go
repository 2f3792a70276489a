// Command launch measures kernel-launch cost through rayd-go: the submit
// cost of one launch and the launch+synchronize round trip of an empty
// kernel, for three paths (the validated launch.Kernel API on the caller's
// goroutine, the same through the device executor, and the raw driver
// binding), interleaved round by round, reported as median/p10/p90 in
// microseconds. With -native it also runs the C driver-API baseline
// (native/launch_native.c) on the same device and PTX and records its figures
// in the same JSON, under the evidence head (build stamp, devices, driver,
// PTX digests).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"time"

	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/internal/evidence"
	"github.com/rayd-go/rayd/launch"
	"github.com/rayd-go/rayd/ptx"
)

type stat struct {
	N        int     `json:"n"`
	P10us    float64 `json:"p10_us"`
	MedianUs float64 `json:"median_us"`
	P90us    float64 `json:"p90_us"`
	MinUs    float64 `json:"min_us"`
}

func summarize(v []float64) stat {
	sort.Float64s(v)
	n := len(v)
	return stat{N: n, P10us: v[n/10], MedianUs: v[n/2], P90us: v[n*9/10], MinUs: v[0]}
}

type variant struct {
	name      string
	submit    func() error
	roundTrip func() error
	sync      func() error
	sub, rt   []float64
}

type report struct {
	evidence.Header
	Device  string                     `json:"device"` // the measured device's name
	Results map[string]map[string]stat `json:"results"`
	Native  json.RawMessage            `json:"native,omitempty"`
	Ratios  map[string]float64         `json:"median_ratio_to_native,omitempty"`
}

func main() {
	ordinal := flag.Int("device", 0, "device ordinal")
	rounds := flag.Int("rounds", 50, "interleaved rounds")
	per := flag.Int("per", 200, "measurements per variant per round")
	native := flag.String("native", "", "path of the C baseline binary (optional)")
	ptxPath := flag.String("ptx", "ptx/basic.ptx", "PTX file for the C baseline")
	out := flag.String("out", "", "write JSON here (default stdout)")
	flag.Parse()
	if err := run(*ordinal, *rounds, *per, *native, *ptxPath, *out); err != nil {
		fmt.Fprintln(os.Stderr, "launch bench:", err)
		os.Exit(1)
	}
}

func run(ordinal, rounds, per int, native, ptxPath, out string) error {
	runtime.LockOSThread()
	d, err := launch.Open(ordinal)
	if err != nil {
		return err
	}
	defer d.Close()
	s, err := d.NewStream()
	if err != nil {
		return err
	}
	defer s.Close()
	k, err := d.Kernel("basic", "rayd_noop")
	if err != nil {
		return err
	}
	raw, err := rawPath(ordinal)
	if err != nil {
		return err
	}
	g, b := launch.Dim3{X: 1}, launch.Dim3{X: 32}
	apiLaunch := func() error { return k.Launch(s, g, b, 0) }
	vs := []*variant{
		{name: "rayd-launch", submit: apiLaunch, sync: s.Synchronize,
			roundTrip: func() error {
				if err := apiLaunch(); err != nil {
					return err
				}
				return s.Synchronize()
			}},
		{name: "rayd-executor", submit: func() error { return d.Do(apiLaunch) }, sync: s.Synchronize,
			roundTrip: func() error {
				return d.Do(func() error {
					if err := apiLaunch(); err != nil {
						return err
					}
					return s.Synchronize()
				})
			}},
		raw,
	}
	for _, v := range vs { // warm-up
		for i := 0; i < 2000; i++ {
			if err := v.roundTrip(); err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
		}
	}
	for r := 0; r < rounds; r++ {
		for _, v := range vs {
			if err := v.sync(); err != nil {
				return err
			}
			for i := 0; i < per; i++ {
				t0 := time.Now()
				if err := v.submit(); err != nil {
					return err
				}
				v.sub = append(v.sub, float64(time.Since(t0).Nanoseconds())/1e3)
			}
			if err := v.sync(); err != nil {
				return err
			}
			for i := 0; i < per; i++ {
				t0 := time.Now()
				if err := v.roundTrip(); err != nil {
					return err
				}
				v.rt = append(v.rt, float64(time.Since(t0).Nanoseconds())/1e3)
			}
		}
	}
	// The cost of one trivial driver call through purego (cuCtxGetCurrent),
	// in batches of 1000, against the same loop in C.
	trivial := make([]float64, 0, 200)
	for b := 0; b < 200; b++ {
		t0 := time.Now()
		for i := 0; i < 1000; i++ {
			if _, err := driver.CurrentContextHandle(); err != nil {
				return err
			}
		}
		trivial = append(trivial, float64(time.Since(t0).Nanoseconds())/1e6)
	}
	h, err := evidence.New([]int{ordinal})
	if err != nil {
		return err
	}
	rep := report{Header: h, Device: h.Devices[0], Results: map[string]map[string]stat{}}
	for _, v := range vs {
		rep.Results[v.name] = map[string]stat{"submit": summarize(v.sub), "round_trip": summarize(v.rt)}
	}
	rep.Results["driver-raw"]["trivial_call"] = summarize(trivial)
	if native != "" {
		outb, err := exec.Command(native, ptxPath, fmt.Sprint(ordinal)).Output()
		if err != nil {
			return fmt.Errorf("native baseline: %w", err)
		}
		rep.Native = outb
		var nat struct {
			Results map[string]stat `json:"results"`
		}
		if err := json.Unmarshal(outb, &nat); err != nil {
			return fmt.Errorf("native baseline output: %w", err)
		}
		rep.Ratios = map[string]float64{}
		for _, v := range vs {
			for _, m := range []string{"submit", "round_trip", "trivial_call"} {
				if r, ok := rep.Results[v.name][m]; ok {
					rep.Ratios[v.name+"/"+m] = r.MedianUs / nat.Results[m].MedianUs
				}
			}
		}
	}
	b2, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if out == "" {
		_, err = os.Stdout.Write(append(b2, '\n'))
		return err
	}
	return os.WriteFile(out, append(b2, '\n'), 0o644)
}

// rawPath binds the raw driver calls on the (locked) calling thread: the
// purego cost alone, without rayd-go's validation or context binding.
func rawPath(ordinal int) (*variant, error) {
	dev, err := driver.DeviceGet(ordinal)
	if err != nil {
		return nil, err
	}
	ctx, err := driver.PrimaryContext(dev)
	if err != nil {
		return nil, err
	}
	if err := ctx.SetCurrent(); err != nil {
		return nil, err
	}
	m, err := ptx.Load("basic")
	if err != nil {
		return nil, err
	}
	mod, err := driver.LoadModule(ordinal, m.Image)
	if err != nil {
		return nil, err
	}
	fn, err := mod.Function("rayd_noop")
	if err != nil {
		return nil, err
	}
	st, err := driver.NewStream(ordinal, driver.StreamNonBlocking)
	if err != nil {
		return nil, err
	}
	args := driver.NewArgs()
	g, b := [3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}
	l := func() error { return fn.Launch(g, b, 0, st, args) }
	return &variant{name: "driver-raw", submit: l, sync: st.Synchronize, roundTrip: func() error {
		if err := l(); err != nil {
			return err
		}
		return st.Synchronize()
	}}, nil
}
