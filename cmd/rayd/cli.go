package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// flags is a subcommand's flag set with its help text.
type flags struct {
	*flag.FlagSet
	synopsis    string // "rayd bench [flags]"
	description string // what the command does, one or more paragraphs
}

// newFlags returns the flag set of a subcommand.
func newFlags(name, synopsis, description string) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {} // parse prints the usage itself, to the right stream
	return &flags{FlagSet: fs, synopsis: synopsis, description: description}
}

// usage prints the synopsis, the description and the flags.
func (f *flags) usage(w io.Writer) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n", f.synopsis, strings.TrimSpace(f.description))
	n := 0
	f.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprintln(w, "\nflags:")
		f.SetOutput(w)
		f.PrintDefaults()
	}
}

// parse parses args. Help (-h, -help) prints the usage on stdout and
// returns (0, true); a bad flag prints the problem and the usage on stderr
// and returns (2, true); otherwise it returns (0, false) and the caller
// goes on.
func (f *flags) parse(args []string, stdout, stderr io.Writer) (code int, done bool) {
	f.SetOutput(stderr)
	err := f.Parse(args)
	switch {
	case err == nil:
		return exitOK, false
	case errors.Is(err, flag.ErrHelp):
		f.usage(stdout)
		return exitOK, true
	}
	fmt.Fprintln(stderr)
	f.usage(stderr)
	return exitUsage, true
}

// usageError prints "rayd <cmd>: msg" and returns the usage status.
func usageError(stderr io.Writer, cmd, format string, args ...any) int {
	fmt.Fprintf(stderr, "rayd %s: %s\n", cmd, fmt.Sprintf(format, args...))
	return exitUsage
}

// failure prints "rayd <cmd>: err" and returns the failure status.
func failure(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "rayd %s: %v\n", cmd, err)
	return exitFailure
}
