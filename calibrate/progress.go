package calibrate

import (
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal (tests replace it).
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && f != nil && term.IsTerminal(int(f.Fd()))
}

// progress counts probe runs on a progress bar, or does nothing when the
// writer is not a terminal.
type progress struct {
	bar *progressbar.ProgressBar
}

// newProgress starts a bar of total runs on w when w is a terminal.
func newProgress(w io.Writer, operation string, total int) *progress {
	if w == nil || !isTerminal(w) {
		return &progress{}
	}
	return &progress{bar: progressbar.NewOptions(max(total, 1),
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("calibrating "+operation),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionClearOnFinish(),
	)}
}

// describe names the current stage.
func (p *progress) describe(s string) {
	if p.bar != nil {
		p.bar.Describe(s)
	}
}

// step counts one probe run.
func (p *progress) step() {
	if p.bar != nil {
		_ = p.bar.Add(1)
	}
}

// grow adds n planned runs.
func (p *progress) grow(n int) {
	if p.bar != nil && n > 0 {
		p.bar.AddMax(n)
	}
}

// done finishes the bar at whatever count was reached.
func (p *progress) done() {
	if p.bar != nil {
		p.bar.ChangeMax64(max(p.bar.State().CurrentNum, 1))
		_ = p.bar.Finish()
	}
}
