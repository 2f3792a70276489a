package benchmarks

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Batch range of the per_ray model curves: 2^16 to 2^24 rays.
const (
	modelMinRays = 1 << 16
	modelMaxRays = 1 << 24
)

// ParseBatch reads a row's batch, "<N> rays" or "<N> samples", as N and
// whether it counts rays.
func ParseBatch(batch string) (n int, rays bool, err error) {
	num, unit, ok := strings.Cut(batch, " ")
	if ok && (unit == "rays" || unit == "samples") {
		if v, perr := strconv.Atoi(num); perr == nil && v > 0 {
			return v, unit == "rays", nil
		}
	}
	return 0, false, fmt.Errorf("benchmarks: batch %q is not \"<N> rays\" or \"<N> samples\"", batch)
}

// Plot draws the speedup over one GPU against the batch size, log2 axis,
// and writes it to name as PNG or SVG (by the extension). The left panel
// holds the per_ray rows (batch in rays), the right the accumulation rows
// (batch in samples): every record's measured points, and for the first
// record carrying each row the seed §5.2 model. A per_ray model is
// T2 ≈ max(T1/2, (N/2)·bytes/BW) with no fixed cost, T1 = ns_per_ray·N,
// bytes = 24 + the measured (else planned) row bytes and BW = d2d_gbps·1e9
// bytes/s; it is batch-independent, so its legend says which term wins. An
// accumulation model is T/(T/2 + fixed) with T proportional to the sample
// count and fixed = multi − single/2; its crossover (speedup 1) is marked.
// Records without a measured speedup (single-device or CPU reference runs)
// give ErrNothingToPlot and no file: an empty plot is never written.
func Plot(name string, recs []*Record) (err error) {
	ext := strings.ToLower(filepath.Ext(name))
	if ext != ".png" && ext != ".svg" {
		return fmt.Errorf("benchmarks: plot %s: extension must be .png or .svg", name)
	}
	var valid []*Record
	for _, r := range recs {
		if r != nil {
			valid = append(valid, r)
		}
	}
	if len(valid) == 0 {
		return errors.New("benchmarks: plot: no records")
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("benchmarks: plot %s: %v", name, p)
		}
	}()
	if !hasSpeedup(valid) {
		return fmt.Errorf("%w: no record has a measured speedup (a single-device or CPU reference run has none)", ErrNothingToPlot)
	}
	title := plotTitle(valid)
	rays := speedupPanel(title+", per_ray", "batch (rays)")
	samples := speedupPanel(title+", accumulation", "batch (samples)")
	addMeasured(rays, samples, valid)
	addModels(rays, samples, valid)
	finishPanel(rays, modelMinRays, modelMaxRays)
	finishPanel(samples, 1<<13, 1<<26)

	w, h := 13*vg.Inch, 6*vg.Inch
	var c vg.CanvasWriterTo
	if ext == ".png" {
		c = vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
	} else {
		c = vgsvg.New(w, h)
	}
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Millimeter * 6,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	canvases := plot.Align([][]*plot.Plot{{rays, samples}}, tiles, draw.New(c))
	rays.Draw(canvases[0][0])
	samples.Draw(canvases[0][1])
	return writeAtomic(name, c)
}

// ErrNothingToPlot is returned by Plot, before anything is written, when no
// record holds a point to draw: an empty plot is never written.
var ErrNothingToPlot = errors.New("benchmarks: nothing to plot")

// hasSpeedup reports whether any row of recs has a finite speedup and a
// readable batch, that is a point that addMeasured draws.
func hasSpeedup(recs []*Record) bool {
	for _, r := range recs {
		for _, name := range configOrder(r) {
			c := r.Configs[name]
			for _, l := range rowsOf(&c) {
				if _, _, err := ParseBatch(l.row.Batch); err == nil && l.row.Speedup != nil &&
					!math.IsNaN(*l.row.Speedup) && !math.IsInf(*l.row.Speedup, 0) {
					return true
				}
			}
		}
	}
	return false
}

// writeAtomic writes the canvas to name through a temporary file.
func writeAtomic(name string, c io.WriterTo) error {
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return fmt.Errorf("benchmarks: plot %s: %w", name, err)
	}
	return writeFileAtomic(name, buf.Bytes())
}

// plotTitle is "rayd bench: <device name> x<count>".
func plotTitle(recs []*Record) string {
	device, count := "unknown device", recs[0].Machine.DeviceCount
	if len(recs[0].Machine.Devices) > 0 {
		device = recs[0].Machine.Devices[0].Name
	}
	for _, r := range recs[1:] {
		if r.Machine.DeviceCount != count || len(r.Machine.Devices) == 0 || r.Machine.Devices[0].Name != device {
			return "rayd bench: mixed machines"
		}
	}
	return fmt.Sprintf("rayd bench: %s x%d", device, count)
}

// speedupPanel is an empty panel with the shared axes.
func speedupPanel(title, xlabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = "speedup over one GPU"
	p.X.Scale = plot.LogScale{}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Add(plotter.NewGrid())
	return p
}

// finishPanel fixes the axis ranges (covering the data) and the log2 ticks,
// and draws the speedup-1 line.
func finishPanel(p *plot.Plot, lo, hi float64) {
	xmin, xmax := lo, hi
	if p.X.Min > 0 && p.X.Min < xmin {
		xmin = p.X.Min
	}
	if p.X.Max > xmax {
		xmax = p.X.Max
	}
	xmin, xmax = math.Exp2(math.Floor(math.Log2(xmin))-1), math.Exp2(math.Ceil(math.Log2(xmax))+1)
	var ticks plot.ConstantTicks
	for k := math.Log2(xmin); k <= math.Log2(xmax); k++ {
		label := ""
		if int(k)%2 == 0 {
			label = fmt.Sprintf("2^%d", int(k))
		}
		ticks = append(ticks, plot.Tick{Value: math.Exp2(k), Label: label})
	}
	p.X.Tick.Marker = ticks
	one := line(plotter.XYs{{X: xmin, Y: 1}, {X: xmax, Y: 1}}, color.Gray{Y: 90}, true)
	p.Add(one)
	p.Legend.Add("speedup 1 (one GPU)", one)
	ymax := 2.0
	if p.Y.Max > ymax {
		ymax = p.Y.Max
	}
	ymax *= 1.45 // headroom for the legend
	if ymax <= 5 {
		var yticks plot.ConstantTicks
		for y := 0.0; y <= ymax; y += 0.25 {
			label := ""
			if math.Mod(y, 0.5) == 0 {
				label = strconv.FormatFloat(y, 'f', 1, 64)
			}
			yticks = append(yticks, plot.Tick{Value: y, Label: label})
		}
		p.Y.Tick.Marker = yticks
	}
	p.X.Min, p.X.Max = xmin, xmax
	p.Y.Min, p.Y.Max = 0, ymax
}

// line is a plotter.Line of the given colour, dashed or solid.
func line(xys plotter.XYs, c color.Color, dashed bool) *plotter.Line {
	l := &plotter.Line{XYs: xys}
	l.LineStyle.Width = vg.Points(1.5)
	l.LineStyle.Color = c
	if dashed {
		l.LineStyle.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	return l
}

// addMeasured adds one scatter per (config, panel) with every record's rows.
func addMeasured(rays, samples *plot.Plot, recs []*Record) {
	type key struct {
		config string
		rays   bool
	}
	pts := map[key]plotter.XYs{}
	var order []string
	for _, r := range recs {
		for _, name := range configOrder(r) {
			if !slices.Contains(order, name) {
				order = append(order, name)
			}
			c := r.Configs[name]
			for _, l := range rowsOf(&c) {
				n, isRays, err := ParseBatch(l.row.Batch)
				if err != nil || l.row.Speedup == nil || math.IsNaN(*l.row.Speedup) || math.IsInf(*l.row.Speedup, 0) {
					continue
				}
				k := key{name, isRays}
				pts[k] = append(pts[k], plotter.XY{X: float64(n), Y: *l.row.Speedup})
			}
		}
	}
	for i, name := range order {
		for _, isRays := range []bool{true, false} {
			xys := pts[key{name, isRays}]
			if len(xys) == 0 {
				continue
			}
			s := &plotter.Scatter{XYs: xys}
			s.GlyphStyle.Color = color.Black
			s.GlyphStyle.Shape = plotutil.Shape(i)
			s.GlyphStyle.Radius = vg.Points(3.5)
			p := samples
			if isRays {
				p = rays
			}
			p.Add(s)
			p.Legend.Add(name+" measured", s)
		}
	}
}

// addModels adds the §5.2 model of the intersect, trace_reflections and
// accumulation rows, each from the first record that can give it.
func addModels(rays, samples *plot.Plot, recs []*Record) {
	// Per row, the model comes from the largest batch that really ran
	// split (a master dispatch has no transfer or fixed cost to read).
	type pick struct {
		row   *Row
		label string
		gbps  float64
		batch int
	}
	best := map[string]*pick{}
	var order []string
	for _, r := range recs {
		for _, name := range configOrder(r) {
			c := r.Configs[name]
			for _, l := range rowsOf(&c) {
				if l.calibrated || l.key == "intersect_offload" || !sharded(l.row) {
					continue
				}
				n, _, err := ParseBatch(l.row.Batch)
				if err != nil {
					continue
				}
				id := name + " " + l.key
				if b, ok := best[id]; ok && b.batch >= n {
					continue
				}
				if _, ok := best[id]; !ok {
					order = append(order, id)
				}
				best[id] = &pick{row: l.row, label: name + " " + l.label, gbps: r.Machine.D2DGBps, batch: n}
			}
		}
	}
	rayLines, accumLines := 0, 0
	for _, id := range order {
		b := best[id]
		_, isRays, _ := ParseBatch(b.row.Batch)
		switch {
		case isRays && addRayModel(rays, b.label, b.row, b.gbps, rayLines):
			rayLines++
		case !isRays && addAccumModel(samples, b.label, b.row, accumLines):
			accumLines++
		}
	}
}

// sharded reports whether a row's multi-device run was split across devices.
func sharded(r *Row) bool {
	switch r.Dispatch {
	case "", "master", "single-device":
		return false
	}
	return r.MultiMS != nil
}

// addRayModel draws max(T1/2, (N/2)·bytes/BW) over 2^16..2^24 rays.
func addRayModel(p *plot.Plot, label string, row *Row, gbps float64, i int) bool {
	n, isRays, err := ParseBatch(row.Batch)
	rowBytes := row.MeasuredRowBytes
	if rowBytes <= 0 {
		rowBytes = row.RowBytes
	}
	ns := row.NsPerRaySingle
	if ns <= 0 && err == nil {
		ns = row.SingleMS * 1e6 / float64(n)
	}
	if err != nil || !isRays || rowBytes <= 0 || !(gbps > 0) || !(ns > 0) {
		return false
	}
	transferNs := float64(rayRowBytes+rowBytes) / (gbps * 1e9) * 1e9 // per remote row
	// The fixed cost is what the measured row spent beyond the model's
	// max term at its own batch (seed §5.2: T2 ≈ max(T1/2, remote·bytes/BW)
	// + fixed).
	fixedNs := 0.0
	if row.MultiMS != nil && err == nil {
		fixedNs = math.Max(*row.MultiMS*1e6-math.Max(ns*float64(n)/2, float64(n)/2*transferNs), 0)
	}
	var xys plotter.XYs
	for k := 16.0; k <= 24; k += 0.25 {
		rays := math.Exp2(k)
		t1 := ns * rays
		t2 := math.Max(t1/2, rays/2*transferNs) + fixedNs
		xys = append(xys, plotter.XY{X: rays, Y: t1 / t2})
	}
	bound := "compute-bound"
	if ns < transferNs {
		bound = "transfer-bound"
	}
	// Crossover: ns·N = max(ns·N/2, N/2·transfer) + fixed.
	cross := math.Inf(1)
	if d := ns - math.Max(ns/2, transferNs/2); d > 0 {
		cross = fixedNs / d
	}
	c := plotutil.Color(i)
	l := line(xys, c, false)
	l.LineStyle.Dashes = plotutil.Dashes(i)
	p.Add(l)
	legend := fmt.Sprintf("%s: model + %.2f ms fixed; %s (%.2f vs %.2f ns/ray)", label, fixedNs/1e6, bound, ns, transferNs)
	switch {
	case math.IsInf(cross, 1):
		legend += ", no crossover"
	case cross >= 1<<16 && cross <= 1<<24:
		p.Add(line(plotter.XYs{{X: cross, Y: 0}, {X: cross, Y: 2.2}}, c, true))
		legend += fmt.Sprintf(", crossover at about %.3g rays (dashed)", cross)
	default:
		legend += fmt.Sprintf(", crossover at about %.3g rays (off the plot)", cross)
	}
	p.Legend.Add(legend, l)
	return true
}

// addAccumModel draws T/(T/2 + fixed) and marks its crossover.
func addAccumModel(p *plot.Plot, label string, row *Row, i int) bool {
	c := plotutil.Color(i)
	n, isRays, err := ParseBatch(row.Batch)
	if err != nil || isRays || row.MultiMS == nil || !(row.SingleMS > 0) {
		return false
	}
	fixed := math.Max(*row.MultiMS-row.SingleMS/2, 0)
	perSample := row.SingleMS / float64(n)
	var xys plotter.XYs
	for k := 12.0; k <= 27; k += 0.25 {
		t := perSample * math.Exp2(k)
		xys = append(xys, plotter.XY{X: math.Exp2(k), Y: t / (t/2 + fixed)})
	}
	l := line(xys, c, false)
	p.Add(l)
	legend := fmt.Sprintf("%s: model T/(T/2 + %.2f ms)", label, fixed)
	switch cross := 2 * fixed / perSample; {
	case fixed <= 0:
		legend += ", no fixed cost: no crossover"
	case cross >= 1<<12 && cross <= 1<<27:
		p.Add(line(plotter.XYs{{X: cross, Y: 0}, {X: cross, Y: 2.2}}, c, true))
		legend += fmt.Sprintf(", crossover at about %.3g samples (dashed)", cross)
	default:
		legend += fmt.Sprintf(", crossover at about %.3g samples (off the plot)", cross)
	}
	p.Legend.Add(legend, l)
	return true
}
