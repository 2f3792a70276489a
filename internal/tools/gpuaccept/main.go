// Command gpuaccept runs prebuilt test binaries (go test -c, CGO_ENABLED=0)
// on a GPU machine with skipping forbidden (RAYD_REQUIRE_GPU=1), counts
// passed/failed/skipped tests per suite from their -test.v output, and writes
// the evidence JSON: commit, UTC date, driver version, device names and the
// per-suite counts. It exits non-zero when any test failed or skipped.
//
//	gpuaccept -out tests/evidence/gpu-accept.json bin/*.test
//
// It needs no Go toolchain at run time, so it runs where the GPUs are.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/rayd-go/rayd/driver"
	"github.com/rayd-go/rayd/launch"
)

// commit is set at build time: -ldflags "-X main.commit=$(git rev-parse HEAD)".
var commit = "unknown"

type suite struct {
	Name     string   `json:"name"`
	Passed   int      `json:"passed"`
	Failed   int      `json:"failed"`
	Skipped  int      `json:"skipped"`
	Seconds  float64  `json:"seconds"`
	ExitCode int      `json:"exit_code"`
	Failures []string `json:"failures,omitempty"`
	Skips    []string `json:"skips,omitempty"`
	Log      string   `json:"log_tail,omitempty"`
}

type evidence struct {
	Commit        string   `json:"commit"`
	Date          string   `json:"date"`
	DriverVersion int      `json:"driver_version"`
	Devices       []string `json:"devices"`
	Suites        []suite  `json:"suites"`
	Passed        int      `json:"passed"`
	Failed        int      `json:"failed"`
	Skipped       int      `json:"skipped"`
}

var resultRE = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): (\S+)`)

func main() {
	out := flag.String("out", "tests/evidence/gpu-accept.json", "evidence file")
	timeout := flag.Duration("timeout", 8*time.Minute, "per-suite timeout")
	flag.Parse()
	ev := evidence{Commit: commit, Date: time.Now().UTC().Format(time.RFC3339)}
	ev.DriverVersion, _ = driver.DriverVersion()
	if n, err := launch.Count(); err == nil {
		for i := 0; i < n; i++ {
			in, _ := launch.DeviceInfo(i)
			ev.Devices = append(ev.Devices, in.Name)
		}
	}
	for _, bin := range flag.Args() {
		s := runSuite(bin, *timeout)
		ev.Suites = append(ev.Suites, s)
		ev.Passed += s.Passed
		ev.Failed += s.Failed
		ev.Skipped += s.Skipped
		fmt.Printf("%-28s passed %3d  failed %2d  skipped %2d  %6.1fs  exit %d\n", s.Name, s.Passed, s.Failed, s.Skipped, s.Seconds, s.ExitCode)
		for _, f := range s.Failures {
			fmt.Println("   FAIL", f)
		}
		for _, f := range s.Skips {
			fmt.Println("   SKIP", f)
		}
	}
	b, _ := json.MarshalIndent(ev, "", "  ")
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("total: %d passed, %d failed, %d skipped on %v\n", ev.Passed, ev.Failed, ev.Skipped, ev.Devices)
	if ev.Failed > 0 || ev.Skipped > 0 || len(ev.Devices) == 0 {
		os.Exit(1)
	}
}

func runSuite(bin string, timeout time.Duration) suite {
	s := suite{Name: strings.TrimSuffix(filepath.Base(bin), ".test")}
	abs, err := filepath.Abs(bin)
	if err != nil {
		s.Failed, s.Failures = 1, []string{err.Error()}
		return s
	}
	cmd := exec.Command(abs, "-test.v", "-test.count=1", "-test.timeout="+timeout.String())
	cmd.Dir = packageDir(s.Name)
	cmd.Env = append(os.Environ(), "RAYD_REQUIRE_GPU=1", "NCCL_NVLS_ENABLE=0")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	t0 := time.Now()
	err = cmd.Run()
	s.Seconds = time.Since(t0).Seconds()
	if ee, ok := err.(*exec.ExitError); ok {
		s.ExitCode = ee.ExitCode()
	} else if err != nil {
		s.ExitCode = -1
		s.Failures = append(s.Failures, err.Error())
		s.Failed++
	}
	text := buf.String() // the scanner below drains buf
	sc := bufio.NewScanner(&buf)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		m := resultRE.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		switch m[1] {
		case "PASS":
			s.Passed++
		case "FAIL":
			s.Failed++
			s.Failures = append(s.Failures, m[2])
		case "SKIP":
			s.Skipped++
			s.Skips = append(s.Skips, m[2])
		}
	}
	if s.ExitCode != 0 && s.Failed == 0 {
		s.Failed++
		s.Failures = append(s.Failures, fmt.Sprintf("exit code %d", s.ExitCode))
	}
	if s.Failed > 0 {
		log := text
		if len(log) > 4000 {
			log = log[len(log)-4000:]
		}
		s.Log = log
	}
	return s
}

// packageDir maps a suite name (bin/<name>.test, as make gpu-bins names
// them: "rayd" for the root package, "/" spelled "-") to the package
// directory, where `go test` would run the binary: tests read testdata and
// sources relative to it.
func packageDir(name string) string {
	if name == "rayd" {
		return "."
	}
	dir := strings.ReplaceAll(name, "-", "/")
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return dir
	}
	return "."
}
