package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/rayd-go/rayd/benchmarks/multidevice"
	"github.com/rayd-go/rayd/calibrate"
)

// isTerminal reports whether w is a terminal (tests replace it).
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && f != nil && term.IsTerminal(int(f.Fd()))
}

// newBar is a progress bar of total steps on w with a count, the elapsed
// time and an ETA, cleared when it finishes.
func newBar(w io.Writer, total int, description string) *progressbar.ProgressBar {
	return progressbar.NewOptions(max(total, 1),
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(description),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

// calibrationBar renders calibrate's progress updates as one bar per
// calibration on w.
type calibrationBar struct {
	w   io.Writer
	bar *progressbar.ProgressBar
}

// update draws u.
func (c *calibrationBar) update(u calibrate.ProgressUpdate) {
	if c.bar == nil {
		c.bar = newBar(c.w, u.Total, u.Stage)
	}
	c.bar.ChangeMax(max(u.Total, 1))
	c.bar.Describe(u.Stage)
	_ = c.bar.Set(u.Done)
	if u.Finished {
		_ = c.bar.Finish()
		c.bar = nil
	}
}

// calibrationProgress is the Progress callback of `rayd calibrate`: a bar
// with an ETA on a terminal, nothing otherwise.
func calibrationProgress(w io.Writer) func(calibrate.ProgressUpdate) {
	if !isTerminal(w) {
		return nil
	}
	return (&calibrationBar{w: w}).update
}

// benchBar renders a benchmark run as one bar of stages on w; a
// calibration inside a stage shows its own count in the description.
type benchBar struct {
	w     io.Writer
	bar   *progressbar.ProgressBar
	stage string
}

// stage draws the start of stage s.
func (b *benchBar) stageStarted(s multidevice.Stage) {
	if b.bar == nil {
		b.bar = newBar(b.w, s.Total, s.What)
	}
	b.stage = s.What
	b.bar.ChangeMax(max(s.Total, 1))
	b.bar.Describe(s.What)
	_ = b.bar.Set(s.Done - 1)
}

// calibration adds a calibration's count to the stage's description.
func (b *benchBar) calibration(u calibrate.ProgressUpdate) {
	if b.bar != nil {
		b.bar.Describe(fmt.Sprintf("%s: %s %d/%d", b.stage, u.Stage, u.Done, u.Total))
	}
}

// finish clears the bar.
func (b *benchBar) finish() {
	if b.bar != nil {
		_ = b.bar.Finish()
	}
}
