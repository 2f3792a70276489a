package calibrate

import (
	"slices"
)

// Ladder returns the refinement rungs of throughput weights tw: for each of
// Shares, the master keeps its weight and every remote weight is scaled by
// the share; a rung summing to zero or repeating an earlier one is dropped.
// The last rung is the master alone whenever the master has a weight.
func Ladder(tw []float64) [][]float64 {
	var out [][]float64
	for _, share := range shares {
		w := slices.Clone(tw)
		sum := 0.0
		for i := range w {
			if i > 0 {
				w[i] *= share
			}
			sum += w[i]
		}
		if sum > 0 && !slices.ContainsFunc(out, func(o []float64) bool { return slices.Equal(o, w) }) {
			out = append(out, w)
		}
	}
	return out
}

// pickTolerant is RayD's _pick_candidate: the first rung (largest remote
// share) whose time is within RefineTolerance of the fastest, among the
// rungs eligible says may win (all when eligible is nil).
func pickTolerant(times []float64, eligible func(k int) bool) int {
	best := -1
	for k, t := range times {
		if (eligible == nil || eligible(k)) && (best < 0 || t < times[best]) {
			best = k
		}
	}
	if best < 0 {
		return -1
	}
	for k, t := range times {
		if (eligible == nil || eligible(k)) && t <= times[best]*(1+RefineTolerance) {
			return k
		}
	}
	return best
}

// refine is stage 2: the ladder, timed and read as the mode says.
func (r *run) refine(rec *Record) error {
	rec.Candidates = Ladder(rec.ThroughputWeights)
	rec.CandidateSamples = make([][]float64, len(rec.Candidates))
	r.bar.describe("ladder " + r.cfg.target)
	mo := rec.MasterOnly()
	if r.cfg.Mode == ModeRayD || mo < 0 || len(rec.Candidates) < 2 {
		return r.refineRayD(rec)
	}
	return r.refineNoiseAware(rec, mo)
}

// refineRayD times every rung warm-up + repeats times in ladder order, reads
// each rung by its minimum and keeps the largest share within tolerance of
// the fastest.
func (r *run) refineRayD(rec *Record) error {
	for round := range r.cfg.WarmUp + r.cfg.Repeats {
		for k, w := range rec.Candidates {
			s, err := r.dispatch(w)
			if err != nil {
				return err
			}
			if round >= r.cfg.WarmUp {
				rec.CandidateSamples[k] = append(rec.CandidateSamples[k], s)
			}
		}
	}
	rec.Rounds = r.cfg.Repeats
	rec.CandidateSeconds = make([]float64, len(rec.Candidates))
	for k, s := range rec.CandidateSamples {
		rec.CandidateSeconds[k] = minimum(s)
	}
	rec.Chosen = pickTolerant(rec.CandidateSeconds, nil)
	rec.Weights = slices.Clone(rec.Candidates[rec.Chosen])
	rec.NearCrossover = rec.MasterOnly() >= 0 && rec.BestSharded() >= 0 && abs(rec.margin()) <= NearCrossoverBand
	return nil
}

// refineNoiseAware repeats rounds in which every open sharded rung is timed
// next to a fresh master-only run (the pair's order alternating), until no
// comparison that could change the answer is undecided, or the cap. A rung
// measured slower than the master alone is closed. The answer is the
// largest share within tolerance of the fastest among the rungs measured
// faster than the master alone, else the master alone.
func (r *run) refineNoiseAware(rec *Record, mo int) error {
	rec.Confidence = r.cfg.Confidence
	for range r.cfg.WarmUp {
		for _, w := range rec.Candidates {
			if _, err := r.dispatch(w); err != nil {
				return err
			}
		}
	}
	open := make([]int, 0, len(rec.Candidates)-1)
	for k := range rec.Candidates {
		if k != mo {
			open = append(open, k)
		}
	}
	comps := make([]Comparison, len(rec.Candidates))
	for k := range comps {
		comps[k] = Comparison{Rung: k, Verdict: Undecided}
	}
	resolved := false
	for round := 0; ; round++ {
		if round >= r.cfg.Repeats {
			r.bar.grow(2 * len(open))
		}
		for pos, k := range open {
			pair := []int{mo, k}
			if (round+pos)%2 == 1 {
				pair = []int{k, mo}
			}
			for _, j := range pair {
				s, err := r.dispatch(rec.Candidates[j])
				if err != nil {
					return err
				}
				rec.CandidateSamples[j] = append(rec.CandidateSamples[j], s)
			}
		}
		rec.Rounds = round + 1
		if rec.Rounds >= r.cfg.Repeats {
			for _, k := range open { // a closed rung keeps its verdict
				comps[k] = compare(k, rec.CandidateSamples[k], rec.CandidateSamples[mo], r.cfg.Confidence)
			}
			open = slices.DeleteFunc(open, func(k int) bool { return comps[k].Verdict == Slower })
			if resolved = settled(medians(rec), comps, mo); resolved {
				break
			}
		}
		if rec.Rounds >= r.cfg.MaxRounds || (r.cfg.MaxProbeTime > 0 && r.spent >= r.cfg.MaxProbeTime) {
			break
		}
	}
	rec.Capped = !resolved
	rec.CandidateSeconds = medians(rec)
	rec.Chosen = pickNoiseAware(rec.CandidateSeconds, comps, mo)
	rec.Weights = slices.Clone(rec.Candidates[rec.Chosen])
	for k, c := range comps {
		if k != mo {
			rec.Comparisons = append(rec.Comparisons, c)
		}
	}
	if bs := rec.BestSharded(); bs >= 0 {
		rec.NearCrossover = comps[bs].Verdict == Undecided
	}
	return nil
}

// medians is each rung's median time.
func medians(rec *Record) []float64 {
	out := make([]float64, len(rec.CandidateSamples))
	for k, s := range rec.CandidateSamples {
		out[k] = median(s)
	}
	return out
}

// pickNoiseAware chooses among the rungs measured faster than the master
// alone, with RayD's tie-break, or the master alone when none is.
func pickNoiseAware(times []float64, comps []Comparison, mo int) int {
	k := pickTolerant(times, func(k int) bool { return k != mo && comps[k].Verdict == Faster })
	if k < 0 {
		return mo
	}
	return k
}

// settled reports whether no undecided rung can change the answer: there
// is none, or an answer faster than the master alone exists and every
// undecided rung is slower than the fastest such rung and could not win
// the tie-break ahead of the answer.
func settled(times []float64, comps []Comparison, mo int) bool {
	choice := pickNoiseAware(times, comps, mo)
	best := -1
	for k, c := range comps {
		if k != mo && c.Verdict == Faster && (best < 0 || times[k] < times[best]) {
			best = k
		}
	}
	for k, c := range comps {
		if k == mo || c.Verdict != Undecided {
			continue
		}
		if best < 0 || times[k] < times[best] || (k < choice && times[k] <= times[best]*(1+RefineTolerance)) {
			return false
		}
	}
	return true
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
