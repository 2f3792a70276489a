package main

import (
	"fmt"
	"slices"
	"unicode/utf8"
)

// Bounds on the output a failed test's record keeps (testRecord.Output).
const (
	maxOutputHead  = 50       // first lines kept
	maxOutputTail  = 150      // last lines kept
	maxOutputBytes = 32 << 10 // bytes kept, head and tail together
	maxHeadBytes   = 8 << 10  // of which the head takes at most
	maxLineBytes   = 4 << 10  // a longer line is cut short
	maxFrames      = 16       // framing lines kept for one test
)

// outLine is one line of a test binary's output, framing removed.
type outLine struct {
	seq   int    // its line number in the stream
	owner string // the test it belongs to (that a framing line names)
	text  string
	frame bool // === RUN, === PAUSE, === CONT, === ATTR or a --- result
}

// lineBuf keeps the first maxOutputHead and the last maxOutputTail lines
// one test printed: each part of what a tree of tests printed together, cut
// as testRecord.Output is cut, comes from those of the tree's tests.
type lineBuf struct {
	head []outLine
	tail []outLine // a ring once full; next is its oldest line
	next int
	n    int // lines added
}

func (b *lineBuf) add(l outLine) {
	b.n++
	switch {
	case len(b.head) < maxOutputHead:
		b.head = append(b.head, l)
	case len(b.tail) < maxOutputTail:
		b.tail = append(b.tail, l)
	default:
		b.tail[b.next] = l
		b.next = (b.next + 1) % maxOutputTail
	}
}

// lines returns the lines kept, in order.
func (b *lineBuf) lines() []outLine {
	out := slices.Clone(b.head)
	out = append(out, b.tail[b.next:]...)
	return append(out, b.tail[:b.next]...)
}

// clip cuts a line longer than maxLineBytes short (at a rune boundary) and
// says so.
func clip(line string) string {
	if len(line) <= maxLineBytes {
		return line
	}
	i := maxLineBytes
	for i > 0 && !utf8.RuneStart(line[i]) {
		i--
	}
	return fmt.Sprintf("%s [gpuaccept: %d bytes cut]", line[:i], len(line)-i)
}

// outputOf is the output of t for its record, and the number of lines left
// out: t's own lines and its subtests' lines and framing lines in stream
// order, the first at most maxOutputHead lines (maxHeadBytes) and the last
// at most maxOutputTail lines (within maxOutputBytes all told).
func (s *stream) outputOf(t *testRecord) ([]string, int) {
	var all []outLine
	total := 0
	for _, u := range s.tree(t) {
		all = append(all, u.out.lines()...)
		total += u.out.n
		if u != t {
			// Its own === RUN and --- lines the record says already.
			all = append(all, u.frames...)
			total += u.nFrames
		}
	}
	if len(all) == 0 {
		return nil, 0
	}
	slices.SortFunc(all, func(a, b outLine) int { return a.seq - b.seq })
	// render is line i as printed, after an "=== NAME" line where the
	// output passes to another test without a framing line naming it.
	render := func(i int) []string {
		prev := t.Name
		if i > 0 {
			prev = all[i-1].owner
		}
		if all[i].frame || all[i].owner == prev {
			return []string{all[i].text}
		}
		return []string{"=== NAME  " + all[i].owner, all[i].text}
	}
	size := func(r []string) int {
		n := 0
		for _, l := range r {
			n += len(l) + 1
		}
		return n
	}
	var head []string
	h, bytes := 0, 0
	for ; h < len(all); h++ {
		r := render(h)
		if len(head)+len(r) > maxOutputHead || bytes+size(r) > maxHeadBytes {
			break
		}
		head, bytes = append(head, r...), bytes+size(r)
	}
	var tail [][]string // backwards
	j, lines := len(all), 0
	for ; j > h; j-- {
		r := render(j - 1)
		if lines+len(r) > maxOutputTail || bytes+size(r) > maxOutputBytes {
			break
		}
		tail, lines, bytes = append(tail, r), lines+len(r), bytes+size(r)
	}
	out := head
	cut := total - h - (len(all) - j)
	if cut > 0 {
		out = append(out, fmt.Sprintf("[gpuaccept: %d lines left out here: a record keeps the first %d and the last %d lines, %d KiB in all]",
			cut, maxOutputHead, maxOutputTail, maxOutputBytes>>10))
	}
	for k := len(tail) - 1; k >= 0; k-- {
		out = append(out, tail[k]...)
	}
	return out, cut
}
