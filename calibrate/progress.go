package calibrate

// ProgressUpdate reports how far a calibration has come. Done counts the
// probe runs finished out of Total planned; Total may grow while the
// calibration runs (a re-measurement or an extra ladder round adds runs).
// Stage names the current step ("throughput intersect", "ladder
// intersect", "re-measuring intersect"). The last update of a calibration,
// successful or not, has Finished set (and Total equal to Done).
type ProgressUpdate struct {
	Operation   string
	Stage       string
	Done, Total int
	Finished    bool
}

// progress forwards the steps of one calibration to Options.Progress (it
// does nothing when that is nil). It is used from the calibrating
// goroutine only.
type progress struct {
	report func(ProgressUpdate)
	u      ProgressUpdate
}

// newProgress starts reporting a calibration of operation with total
// planned runs.
func newProgress(report func(ProgressUpdate), operation string, total int) *progress {
	p := &progress{report: report, u: ProgressUpdate{Operation: operation, Stage: "calibrating " + operation, Total: max(total, 1)}}
	p.send()
	return p
}

func (p *progress) send() {
	if p.report != nil {
		p.report(p.u)
	}
}

// describe names the current stage.
func (p *progress) describe(s string) {
	p.u.Stage = s
	p.send()
}

// step counts one probe run.
func (p *progress) step() {
	p.u.Done++
	p.u.Total = max(p.u.Total, p.u.Done)
	p.send()
}

// grow adds n planned runs.
func (p *progress) grow(n int) {
	if n > 0 {
		p.u.Total += n
		p.send()
	}
}

// done reports the end at whatever count was reached.
func (p *progress) done() {
	p.u.Total, p.u.Finished = max(p.u.Done, 1), true
	p.send()
}
