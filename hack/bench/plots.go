package main

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// savePlot writes p as a PNG into the report's directory and lists it in the report.
func (h *harness) savePlot(p *plot.Plot, name string) {
	path := filepath.Join(h.out, name)
	if err := os.MkdirAll(h.out, 0o755); err != nil {
		h.logf("plot %s: %v", name, err)
		return
	}
	if err := p.Save(8*vg.Inch, 5*vg.Inch, path); err != nil {
		h.logf("plot %s: %v", name, err)
		return
	}
	h.rep.plots = append(h.rep.plots, name)
}

// plotTranslation plots the time per mutation of the parse floor (of the first mix) and of
// each mix's translation on each topology against the number of mutations.
func (h *harness) plotTranslation(results []translationResult) {
	p := plot.New()
	p.Title.Text = "Translation cost per mutation (flat = linear growth)"
	p.X.Label.Text = "mutations"
	p.Y.Label.Text = "µs per mutation"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	var lines []any
	for i, r := range results {
		var floor, tr plotter.XYs
		for _, s := range r.sizes {
			floor = append(floor, plotter.XY{X: float64(s.n), Y: float64(s.floor.Microseconds()) / float64(s.n)})
			tr = append(tr, plotter.XY{X: float64(s.n), Y: float64(s.translated.Microseconds()) / float64(s.n)})
		}
		if i == 0 {
			lines = append(lines, "parse floor", floor)
		}
		lines = append(lines, fmt.Sprintf("translate, %s mix, %s", r.mix, r.topology), tr)
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		h.logf("plot: %v", err)
		return
	}
	p.Y.Min = 0
	h.savePlot(p, "translation.png")
}

// plotCaches plots the API server requests and memory of both sides, normalised to (a).
func (h *harness) plotCaches(a, b *sideResult) {
	p := plot.New()
	p.Title.Text = "(b) topolayer run relative to (a) ten resident managers (a = 1)"
	p.Y.Label.Text = "ratio (b)/(a)"
	names := []string{"watches", "LISTs", "all requests", "peak RSS", "GB·s"}
	rel := func(x, y float64) float64 {
		if y == 0 {
			return 0
		}
		return x / y
	}
	vals := plotter.Values{
		rel(float64(b.workload.watches), float64(a.workload.watches)),
		rel(float64(b.workload.lists), float64(a.workload.lists)),
		rel(float64(b.workload.total), float64(a.workload.total)),
		rel(float64(b.mem.PeakBytes), float64(a.mem.PeakBytes)),
		rel(b.mem.GBSeconds, a.mem.GBSeconds),
	}
	bars, err := plotter.NewBarChart(vals, vg.Points(40))
	if err != nil {
		h.logf("plot: %v", err)
		return
	}
	bars.Color = color.RGBA{R: 60, G: 110, B: 200, A: 255}
	p.Add(bars)
	target := plotter.NewFunction(func(float64) float64 { return 0.1 })
	target.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
	p.Add(target)
	p.Legend.Add("target for watches and LISTs (1/N)", target)
	p.NominalX(names...)
	p.Y.Min = 0
	h.savePlot(p, "caches.png")
}

// plotLatency plots the cumulative distribution of the latencies of each run.
func (h *harness) plotLatency(runs map[string][]time.Duration) {
	p := plot.New()
	p.Title.Text = "Input change → output applied (every reading operator), CDF"
	p.X.Label.Text = "seconds"
	p.Y.Label.Text = "fraction of changes"
	names := make([]string, 0, len(runs))
	for n := range runs {
		names = append(names, n)
	}
	sort.Strings(names)
	var lines []any
	for _, n := range names {
		ls := slices.Clone(runs[n])
		slices.Sort(ls)
		xy := make(plotter.XYs, len(ls))
		for i, l := range ls {
			xy[i] = plotter.XY{X: l.Seconds(), Y: float64(i+1) / float64(len(ls))}
		}
		if len(xy) > 0 {
			lines = append(lines, fmt.Sprintf("%s (%d)", n, len(ls)), xy)
		}
	}
	if err := plotutil.AddLines(p, lines...); err != nil {
		h.logf("plot: %v", err)
		return
	}
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top, p.Legend.Left = false, false // bottom right, inside the axes
	h.savePlot(p, "latency-cdf.png")
}
