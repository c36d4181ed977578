package page

// Set-of-mark screenshots: the ids of the element list drawn on a copy of
// the viewport screenshot, so that a model that reads images can tie what
// it sees to the id it must act on (Skyvern and browser-use send the same
// kind of picture). The run's own screenshots stay clean: only the copy
// sent to the model is marked.

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"math"
	"strings"

	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// MarkColor is the colour of the boxes and labels of a marked screenshot:
// a saturated magenta, which stands out on light and dark pages alike and
// which few pages use. Label text is black on it (a contrast of about 6.7
// to 1).
var MarkColor = color.RGBA{R: 0xff, G: 0x00, B: 0xff, A: 0xff}

// markQuality is the JPEG quality of marked screenshots: a little higher
// than the default, so that the small labels stay legible.
const markQuality = 80

// MarkScreenshot returns a copy of the observation's screenshot with, for
// every element in the viewport, a thin box around the element and its id
// (in capitals) in a small label at a corner of the box (above its top-left corner when
// there is room, else at another corner or inside; labels are placed so as
// not to cover each other where the page leaves room). Coordinates are
// scaled from CSS pixels to the image's pixels (the device pixel ratio:
// the image's width over Observation.Viewport's). obs.Screenshot is not
// changed. It is an error when the observation has no screenshot or the
// screenshot is not a JPEG.
func MarkScreenshot(obs *Observation) ([]byte, error) {
	if obs == nil || len(obs.Screenshot) == 0 {
		return nil, errors.New("mark the screenshot: the observation has no screenshot")
	}
	src, err := jpeg.Decode(bytes.NewReader(obs.Screenshot))
	if err != nil {
		return nil, fmt.Errorf("mark the screenshot: %w", err)
	}
	img := image.NewRGBA(src.Bounds())
	draw.Draw(img, img.Bounds(), src, src.Bounds().Min, draw.Src)
	drawMarks(img, obs.Elements, obs.Viewport)
	var out bytes.Buffer
	out.Grow(len(obs.Screenshot) + len(obs.Screenshot)/4)
	if err := jpeg.Encode(&out, img, &jpeg.Options{Quality: markQuality}); err != nil {
		return nil, fmt.Errorf("mark the screenshot: %w", err)
	}
	return out.Bytes(), nil
}

// drawMarks draws the boxes, then the labels (so that no box crosses a
// label), of the elements in the viewport onto img, and returns where the
// labels went. viewport is the size of the viewport in CSS pixels.
func drawMarks(img *image.RGBA, els []Element, viewport [2]float64) []image.Rectangle {
	bounds := img.Bounds()
	scale := 1.0
	if viewport[0] > 0 {
		scale = float64(bounds.Dx()) / viewport[0]
	}
	// Lines and glyphs grow with the pixel ratio, in whole pixels. Labels
	// are in capitals of the 7×13 bitmap font: capitals are taller than
	// lower-case letters, so legible at that size without covering more of
	// the page, and ids are read regardless of case (CleanID).
	unit := max(1, int(math.Round(scale)))
	line := 2 * unit

	type mark struct {
		box image.Rectangle
		id  string
	}
	marks := make([]mark, 0, len(els))
	for i := range els {
		e := &els[i]
		if !e.InViewport || e.ID == "" {
			continue
		}
		r := image.Rect(
			int(math.Floor(e.Rect[0]*scale)), int(math.Floor(e.Rect[1]*scale)),
			int(math.Ceil((e.Rect[0]+e.Rect[2])*scale)), int(math.Ceil((e.Rect[1]+e.Rect[3])*scale)),
		).Add(bounds.Min)
		if r.Intersect(bounds).Empty() {
			continue
		}
		marks = append(marks, mark{box: r, id: e.ID})
		strokeRect(img, r.Inset(-line), line)
	}

	face := basicfont.Face7x13
	pad := unit
	lh := (face.Ascent+face.Descent)*unit + 2*pad
	placed := make([]image.Rectangle, 0, len(marks))
	for _, m := range marks {
		lw := len(m.id)*face.Advance*unit + 2*pad
		b := m.box.Inset(-line)
		// Candidates, best first: above the top-left corner, above the
		// top-right one, inside the top-left, below the bottom-left, inside
		// the bottom-right.
		cands := [...]image.Rectangle{
			image.Rect(b.Min.X, b.Min.Y-lh, b.Min.X+lw, b.Min.Y),
			image.Rect(b.Max.X-lw, b.Min.Y-lh, b.Max.X, b.Min.Y),
			image.Rect(b.Min.X+line, b.Min.Y+line, b.Min.X+line+lw, b.Min.Y+line+lh),
			image.Rect(b.Min.X, b.Max.Y, b.Min.X+lw, b.Max.Y+lh),
			image.Rect(b.Max.X-line-lw, b.Max.Y-line-lh, b.Max.X-line, b.Max.Y-line),
		}
		best, found := image.Rectangle{}, false
		for _, c := range cands {
			c = inside(c, bounds)
			if !overlapsAny(c, placed) {
				best, found = c, true
				break
			}
		}
		if !found {
			best = inside(cands[0], bounds)
		}
		placed = append(placed, best)
		fillRect(img, best, MarkColor)
		drawText(img, face, best.Min.X+pad, best.Min.Y+pad, strings.ToUpper(m.id), unit, color.RGBA{A: 0xff})
	}
	return placed
}

// inside moves r into bounds (keeping its size when it fits).
func inside(r, bounds image.Rectangle) image.Rectangle {
	if r.Max.X > bounds.Max.X {
		r = r.Add(image.Pt(bounds.Max.X-r.Max.X, 0))
	}
	if r.Min.X < bounds.Min.X {
		r = r.Add(image.Pt(bounds.Min.X-r.Min.X, 0))
	}
	if r.Max.Y > bounds.Max.Y {
		r = r.Add(image.Pt(0, bounds.Max.Y-r.Max.Y))
	}
	if r.Min.Y < bounds.Min.Y {
		r = r.Add(image.Pt(0, bounds.Min.Y-r.Min.Y))
	}
	return r
}

func overlapsAny(r image.Rectangle, placed []image.Rectangle) bool {
	for _, p := range placed {
		if r.Overlaps(p) {
			return true
		}
	}
	return false
}

// strokeRect draws the border of r, w pixels wide, inside r.
func strokeRect(img *image.RGBA, r image.Rectangle, w int) {
	fillRect(img, image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+w), MarkColor)
	fillRect(img, image.Rect(r.Min.X, r.Max.Y-w, r.Max.X, r.Max.Y), MarkColor)
	fillRect(img, image.Rect(r.Min.X, r.Min.Y+w, r.Min.X+w, r.Max.Y-w), MarkColor)
	fillRect(img, image.Rect(r.Max.X-w, r.Min.Y+w, r.Max.X, r.Max.Y-w), MarkColor)
}

// fillRect paints r (clipped to the image) in c.
func fillRect(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	r = r.Intersect(img.Bounds())
	if r.Empty() {
		return
	}
	px := [4]byte{c.R, c.G, c.B, c.A}
	row := img.Pix[img.PixOffset(r.Min.X, r.Min.Y):]
	n := r.Dx() * 4
	for x := 0; x < n; x += 4 {
		copy(row[x:x+4], px[:])
	}
	first := row[:n]
	for y := r.Min.Y + 1; y < r.Max.Y; y++ {
		copy(img.Pix[img.PixOffset(r.Min.X, y):], first)
	}
}

// drawText draws s with the bitmap face, each font pixel
// unit×unit image pixels, the top-left of the first glyph cell at (x, y).
func drawText(img *image.RGBA, face *basicfont.Face, x, y int, s string, unit int, c color.RGBA) {
	left := 0 // in font pixels from x
	for _, ch := range s {
		dr, mask, mp, adv, ok := face.Glyph(fixed.P(left, face.Ascent), ch)
		if ok {
			for gy := 0; gy < dr.Dy(); gy++ {
				for gx := 0; gx < dr.Dx(); gx++ {
					if _, _, _, a := mask.At(mp.X+gx, mp.Y+gy).RGBA(); a < 0x8000 {
						continue
					}
					px, py := x+(dr.Min.X+gx)*unit, y+(dr.Min.Y+gy)*unit
					fillRect(img, image.Rect(px, py, px+unit, py+unit), c)
				}
			}
		}
		left += adv.Round()
	}
}
