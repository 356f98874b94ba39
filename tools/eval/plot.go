package eval

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// palette has ten distinct colours (Tableau 10), so that a figure's
// eight algorithms never share one.
var palette = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xd6, 0x27, 0x28, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff},
	{0xbc, 0xbd, 0x22, 0xff}, {0x17, 0xbe, 0xcf, 0xff},
}

func colour(i int) color.Color { return palette[i%len(palette)] }

// Series is one line of a figure.
type Series struct {
	Name string
	X, Y []float64
	// Reference draws the line black and dashed (the truth).
	Reference bool
	// Points draws markers only, no line.
	Points bool
}

// Panel is one plot of a figure.
type Panel struct {
	Title, XLabel, YLabel string
	Series                []Series
	// YMin and YMax fix the Y range when YMax > YMin.
	YMin, YMax float64
	// LogX uses a logarithmic X axis.
	LogX bool
	// Legend places the legend: "tr" (default), "br", "bl", "tl".
	Legend string
	// Categories, when set, make a grouped bar chart: one group per
	// category, one bar per series (its Y values, by category).
	Categories []string
}

// Figure is a grid of panels saved as one PNG.
type Figure struct {
	// File is the PNG's name (in the output directory).
	File string
	// Caption describes the figure in docs/EVALUATION.md.
	Caption string
	// Cols is the number of panels per row (default 2, at most the
	// number of panels).
	Cols   int
	Panels []Panel
}

func (pn Panel) plot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = pn.Title
	p.X.Label.Text = pn.XLabel
	p.Y.Label.Text = pn.YLabel
	p.Add(plotter.NewGrid())
	if pn.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	if pn.YMax > pn.YMin {
		p.Y.Min, p.Y.Max = pn.YMin, pn.YMax
	}
	if len(pn.Categories) > 0 {
		if err := pn.bars(p); err != nil {
			return nil, err
		}
	}
	k := 0
	for _, s := range pn.Series {
		if len(pn.Categories) > 0 {
			break
		}
		if len(s.X) != len(s.Y) {
			return nil, fmt.Errorf("series %q: %d x values, %d y values", s.Name, len(s.X), len(s.Y))
		}
		if len(s.X) == 0 {
			continue
		}
		xys := make(plotter.XYs, len(s.X))
		for i := range s.X {
			xys[i].X, xys[i].Y = s.X[i], s.Y[i]
		}
		switch {
		case s.Points:
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				return nil, fmt.Errorf("series %q: %w", s.Name, err)
			}
			sc.GlyphStyle.Color = colour(k)
			sc.GlyphStyle.Shape = plotutil.Shape(k)
			sc.GlyphStyle.Radius = vg.Points(2)
			k++
			p.Add(sc)
			p.Legend.Add(s.Name, sc)
		case s.Reference:
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, fmt.Errorf("series %q: %w", s.Name, err)
			}
			l.LineStyle.Color = color.Black
			l.LineStyle.Width = vg.Points(1.5)
			l.LineStyle.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			p.Add(l)
			p.Legend.Add(s.Name, l)
		default:
			l, pts, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, fmt.Errorf("series %q: %w", s.Name, err)
			}
			l.LineStyle.Color = colour(k)
			l.LineStyle.Width = vg.Points(1.2)
			pts.GlyphStyle.Color = colour(k)
			pts.GlyphStyle.Shape = plotutil.Shape(k)
			pts.GlyphStyle.Radius = vg.Points(2)
			k++
			p.Add(l, pts)
			p.Legend.Add(s.Name, l, pts)
		}
	}
	switch pn.Legend {
	case "br":
		p.Legend.Top = false
	case "bl":
		p.Legend.Top, p.Legend.Left = false, true
	case "tl":
		p.Legend.Top, p.Legend.Left = true, true
	default:
		p.Legend.Top = true
	}
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	return p, nil
}

// bars draws the series as grouped bars over the categories.
func (pn Panel) bars(p *plot.Plot) error {
	w := vg.Points(60 / float64(max(1, len(pn.Series))))
	for k, s := range pn.Series {
		if len(s.Y) != len(pn.Categories) {
			return fmt.Errorf("series %q: %d values for %d categories", s.Name, len(s.Y), len(pn.Categories))
		}
		b, err := plotter.NewBarChart(plotter.Values(s.Y), w)
		if err != nil {
			return fmt.Errorf("series %q: %w", s.Name, err)
		}
		b.Color = colour(k)
		b.LineStyle.Width = 0
		b.Offset = w * vg.Length(float64(k)-float64(len(pn.Series)-1)/2)
		p.Add(b)
		p.Legend.Add(s.Name, b)
	}
	p.NominalX(pn.Categories...)
	return nil
}

// Save draws the figure into dir/File.
func (f Figure) Save(dir string) error {
	if len(f.Panels) == 0 {
		return fmt.Errorf("figure %s: no panels", f.File)
	}
	cols := f.Cols
	if cols <= 0 {
		cols = 2
	}
	cols = min(cols, len(f.Panels))
	rows := (len(f.Panels) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
	}
	for i, pn := range f.Panels {
		p, err := pn.plot()
		if err != nil {
			return fmt.Errorf("figure %s: %w", f.File, err)
		}
		grid[i/cols][i%cols] = p
	}
	const w, h = 6 * vg.Inch, 4.2 * vg.Inch
	img := vgimg.NewWith(vgimg.UseWH(w*vg.Length(cols), h*vg.Length(rows)), vgimg.UseDPI(96))
	dc := draw.New(img)
	canvases := plot.Align(grid, draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}, dc)
	for i := range grid {
		for j, p := range grid[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("figure %s: %w", f.File, err)
	}
	out, err := os.Create(filepath.Join(dir, f.File))
	if err != nil {
		return fmt.Errorf("figure %s: %w", f.File, err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(out); err != nil {
		out.Close()
		return fmt.Errorf("figure %s: %w", f.File, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("figure %s: %w", f.File, err)
	}
	return nil
}
