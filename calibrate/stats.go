package calibrate

import (
	"math"
	"slices"
)

// Verdict is the noise-aware reading of one rung against the master alone.
type Verdict string

// The verdicts.
const (
	// Faster: the rung beats the master alone beyond the noise.
	Faster Verdict = "faster"
	// Slower: the rung loses to the master alone beyond the noise.
	Slower Verdict = "slower"
	// Undecided: the confidence interval of the ratio contains 1.
	Undecided Verdict = "undecided"
)

// Comparison is a sharded rung read against the master-only rung: the
// Hodges–Lehmann estimate of the ratio of their times minus one (Shift:
// −0.05 means 5% faster than the master alone) and, when the samples allow
// one at the configured confidence (Bounded), its distribution-free
// confidence interval [Low, High] from the Mann–Whitney statistic.
type Comparison struct {
	Rung    int     `json:"rung"`
	Shift   float64 `json:"shift"`
	Low     float64 `json:"low"`
	High    float64 `json:"high"`
	Bounded bool    `json:"bounded"`
	Samples int     `json:"samples"`
	Verdict Verdict `json:"verdict"`
}

// median returns the median of x (0 for none).
func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := slices.Clone(x)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// minimum returns the smallest of x (0 for none).
func minimum(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	return slices.Min(x)
}

// zQuantile is the two-sided standard normal quantile of conf.
func zQuantile(conf float64) float64 { return math.Sqrt2 * math.Erfinv(conf) }

// positiveLog is log(x) with x clamped away from zero.
func positiveLog(x float64) float64 { return math.Log(max(x, 1e-15)) }

// compare reads rung samples a against master samples b on the log scale:
// every pairwise difference log a_i − log b_j, their median as the
// estimate, and the order statistics k+1 and nm−k as the interval, with
// k = ⌊nm/2 − z·√(nm(n+m+1)/12)⌋ (normal approximation of the Mann–Whitney
// statistic, no tie correction). Shift, Low and High come back as ratios
// minus one. The interval needs k ≥ 0: too few samples leave it unbounded
// and the verdict undecided.
func compare(rung int, a, b []float64, conf float64) Comparison {
	c := Comparison{Rung: rung, Samples: len(a), Verdict: Undecided}
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return c
	}
	la := make([]float64, n)
	for i, x := range a {
		la[i] = positiveLog(x)
	}
	d := make([]float64, 0, n*m)
	for _, y := range b {
		ly := positiveLog(y)
		for _, x := range la {
			d = append(d, x-ly)
		}
	}
	slices.Sort(d)
	nm := len(d)
	if nm%2 == 1 {
		c.Shift = math.Expm1(d[nm/2])
	} else {
		c.Shift = math.Expm1((d[nm/2-1] + d[nm/2]) / 2)
	}
	fn, fm := float64(n), float64(m)
	k := int(math.Floor(fn*fm/2 - zQuantile(conf)*math.Sqrt(fn*fm*(fn+fm+1)/12)))
	if k < 0 {
		return c
	}
	c.Bounded = true
	c.Low, c.High = math.Expm1(d[k]), math.Expm1(d[nm-1-k])
	switch {
	case c.High < 0:
		c.Verdict = Faster
	case c.Low > 0:
		c.Verdict = Slower
	}
	return c
}
