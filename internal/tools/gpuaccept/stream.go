package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rayd-go/rayd/internal/gpumark"
)

// The framing byte the testing package puts before its own lines under
// -test.v=test2json (so that test output cannot be mistaken for them).
const frame = "\x16"

// Outcomes of a test.
const (
	outPass     = "pass"
	outFail     = "fail"
	outSkip     = "skip"
	outDeferred = "deferred" // skipped at a GPU gate for want of devices
	outNoResult = "no result"
)

// testRecord is one test or subtest as the evidence lists it.
type testRecord struct {
	Name    string  `json:"name"`
	Outcome string  `json:"outcome"`
	Seconds float64 `json:"seconds"`
	// GPU: the test, a test enclosing it or one of its subtests passed a
	// GPU gate (holds a gpumark marker in state ran or deferred).
	GPU bool `json:"gpu"`
	// Needs is the smallest device count the test's own gates asked for
	// (0: it has no gate of its own).
	Needs int `json:"needs_devices,omitempty"`
	// Deferred says why a deferred test did not run here.
	Deferred string `json:"deferred,omitempty"`
	// Output is what a failed test (outcome fail or no result) printed, in
	// order: its own lines (t.Log and t.Error messages such as
	// "x_test.go:12: ...", and whatever the stream attributes to it after
	// its --- FAIL line, a panic for one) with the lines, === RUN and ---
	// result lines of its subtests nested in, and an "=== NAME  Test" line
	// where the output passes from one test of the tree to another. Its own
	// === RUN and --- lines are left out. It holds at most the first
	// maxOutputHead and the last maxOutputTail lines and maxOutputBytes
	// bytes (a line over maxLineBytes is cut short); where lines were left
	// out, a line saying so stands in their place. Empty for other outcomes.
	Output []string `json:"output,omitempty"`
	// OutputCut is the number of lines left out of Output (0: none).
	OutputCut int `json:"output_lines_cut,omitempty"`

	markers []gpumark.Marker
	bad     []string // attribute values that are not markers
	out     lineBuf  // its own output lines, bounded
	frames  []outLine
	nFrames int  // framing lines naming it, frames holds the first maxFrames
	result  bool // a --- line was seen
}

// topLevel reports whether the record is a top-level test.
func (r *testRecord) topLevel() bool { return !strings.Contains(r.Name, "/") }

// stream is what one run of a test binary printed, parsed.
type stream struct {
	tests  []*testRecord // in order of first appearance
	byName map[string]*testRecord
	final  string   // the binary's last verdict line, "PASS" or "FAIL"
	tail   []string // the last output lines, framing removed
	seq    int      // the number of lines read
}

const maxTail = 60

func (s *stream) get(name string) *testRecord {
	if r, ok := s.byName[name]; ok {
		return r
	}
	r := &testRecord{Name: name, Outcome: outNoResult}
	s.byName[name] = r
	s.tests = append(s.tests, r)
	return r
}

func (s *stream) output(cur, line string) {
	s.tail = append(s.tail, line)
	if len(s.tail) > maxTail {
		s.tail = s.tail[len(s.tail)-maxTail:]
	}
	if r, ok := s.byName[cur]; ok {
		r.out.add(outLine{seq: s.seq, owner: r.Name, text: clip(line)})
	}
}

// frameOf records a framing line (=== RUN, --- FAIL, ...) that names t, for
// the output of the failed tests around it.
func (s *stream) frameOf(t *testRecord, body string) {
	t.nFrames++
	if len(t.frames) < maxFrames {
		t.frames = append(t.frames, outLine{seq: s.seq, owner: t.Name, text: clip(body), frame: true})
	}
}

// parseStream reads the output of a test binary run with
// -test.v=test2json: framed lines name the test that runs, its attributes
// and its result; unframed lines are output of the test named last. It
// needs no Go toolchain (cmd/test2json is not required).
func parseStream(r io.Reader) (*stream, error) {
	s := &stream{byName: map[string]*testRecord{}}
	br := bufio.NewReaderSize(r, 1<<16)
	cur := ""
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			s.seq++
			line = strings.TrimRight(line, "\r\n")
			if body, ok := strings.CutPrefix(line, frame); ok {
				cur = s.framed(strings.TrimLeft(body, " "), cur)
				s.output("", body)
			} else {
				s.output(cur, line)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return s, err
		}
	}
	s.finish()
	return s, nil
}

// framed applies one framing line and returns the test later output
// belongs to.
func (s *stream) framed(body, cur string) string {
	for _, p := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME"} {
		if rest, ok := strings.CutPrefix(body, p); ok {
			name := strings.TrimSpace(rest)
			if name != "" && p == "=== RUN" {
				s.get(name)
			}
			if t, ok := s.byName[name]; ok && p != "=== NAME" {
				s.frameOf(t, body)
			}
			return name
		}
	}
	if rest, ok := strings.CutPrefix(body, "=== ATTR"); ok {
		name, kv, _ := strings.Cut(strings.TrimLeft(rest, " "), " ")
		key, val, _ := strings.Cut(kv, " ")
		if key == gpumark.Key {
			t := s.get(name)
			if m, err := gpumark.Parse(val); err == nil {
				t.markers = append(t.markers, m)
			} else {
				t.bad = append(t.bad, val)
			}
		}
		if t, ok := s.byName[name]; ok {
			s.frameOf(t, body)
		}
		return cur
	}
	for _, o := range []struct{ prefix, outcome string }{{"--- PASS: ", outPass}, {"--- FAIL: ", outFail}, {"--- SKIP: ", outSkip}} {
		if rest, ok := strings.CutPrefix(body, o.prefix); ok {
			name, secs := splitResult(rest)
			t := s.get(name)
			t.Outcome, t.Seconds, t.result = o.outcome, secs, true
			s.frameOf(t, body)
			return name
		}
	}
	switch body {
	case "PASS", "FAIL":
		s.final = body
		return ""
	}
	return cur
}

// splitResult splits "Name (1.23s)" into the name and the seconds.
func splitResult(rest string) (string, float64) {
	i := strings.LastIndex(rest, " (")
	if i < 0 || !strings.HasSuffix(rest, "s)") {
		return strings.TrimSpace(rest), 0
	}
	secs, err := strconv.ParseFloat(rest[i+2:len(rest)-2], 64)
	if err != nil {
		return strings.TrimSpace(rest), 0
	}
	return rest[:i], secs
}

// finish derives what the lines alone do not say: deferral, GPU work
// inherited from enclosing tests, and each test's own device need.
func (s *stream) finish() {
	for _, t := range s.tests {
		for _, m := range t.markers {
			if t.Needs == 0 || m.Needs < t.Needs {
				t.Needs = m.Needs
			}
			if m.State == gpumark.Deferred && t.Outcome == outSkip {
				t.Outcome = outDeferred
				t.Deferred = fmt.Sprintf("needs %d devices, %d visible", m.Needs, m.Visible)
			}
		}
	}
	// A test is GPU work when it or a test around it passed a gate, and a
	// test is GPU work when a subtest of it did.
	for _, t := range s.tests {
		if !gated(t) {
			continue
		}
		for _, u := range s.tests {
			if u.Name == t.Name || strings.HasPrefix(u.Name, t.Name+"/") || strings.HasPrefix(t.Name, u.Name+"/") {
				u.GPU = true
			}
		}
	}
	for _, t := range s.tests {
		if t.Outcome == outFail || t.Outcome == outNoResult {
			t.Output, t.OutputCut = s.outputOf(t)
		}
	}
}

// gated reports whether t passed a GPU gate itself (ran or was deferred).
func gated(t *testRecord) bool {
	for _, m := range t.markers {
		if m.State == gpumark.Ran || m.State == gpumark.Deferred {
			return true
		}
	}
	return false
}

// tree returns t and every subtest under it.
func (s *stream) tree(t *testRecord) []*testRecord {
	out := []*testRecord{t}
	for _, u := range s.tests {
		if strings.HasPrefix(u.Name, t.Name+"/") {
			out = append(out, u)
		}
	}
	return out
}
