// Command benchrecord turns the printed run of Go benchmarks (the text a
// `go test -bench` binary writes, read from standard input) into a stamped
// JSON record: the evidence head of a benchmark report (build commit and
// dirty flag, date, driver, devices, the embedded PTX modules' digests and
// the device's description, internal/benchhead), the command that ran,
// the run's configuration lines (goos, goarch, pkg, cpu) and every result.
//
//	accel.test -test.run xxx -test.bench 'GPUTLASBuild' > run.txt
//	benchrecord -command "..." -out record.json < run.txt
//
// It fails, writing nothing, when the run holds no result, when any
// benchmark or test was skipped or failed, or when the run panicked: a
// record stands for a run in which everything asked for ran. It needs the
// device it describes (-device).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/rayd-go/rayd/internal/benchhead"
)

func main() {
	ordinal := flag.Int("device", 0, "device ordinal the run used (described in the record's head)")
	command := flag.String("command", "", "the command that printed the run (required)")
	note := flag.String("note", "", "what the run measures, for a reader of the record")
	out := flag.String("out", "", "JSON output path (required)")
	flag.Parse()
	if err := run(os.Stdin, os.Stdout, *ordinal, *command, *note, *out); err != nil {
		fmt.Fprintln(os.Stderr, "benchrecord:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, w io.Writer, ordinal int, command, note, out string) error {
	if command == "" || out == "" {
		return fmt.Errorf("-command and -out are both required")
	}
	text, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	cfg, results, err := parse(text)
	if err != nil {
		return err
	}
	head, err := benchhead.New(ordinal)
	if err != nil {
		return err
	}
	rec := record{Header: head, Command: command, Note: note, Config: cfg, Benchmarks: results}
	if err := benchhead.WriteJSON(out, rec); err != nil {
		return err
	}
	fmt.Fprintf(w, "benchrecord: %d results, commit %.12s dirty %v -> %s\n", len(results), head.Commit, head.Dirty, out)
	return nil
}
