package page

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/abctl/abctl/internal/testsite"
)

// solidJPEG is a w×h JPEG of one colour.
func solidJPEG(t testing.TB, w, h int, c color.RGBA) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, 0xff
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// isMark reports whether a pixel has the colour of the marks, give or take
// what JPEG does to it.
func isMark(c color.Color) bool {
	r, g, b, _ := c.RGBA()
	return r>>8 > 0xc0 && g>>8 < 0x60 && b>>8 > 0xc0
}

// marksIn counts the mark-coloured pixels of img in r.
func marksIn(img image.Image, r image.Rectangle) int {
	n := 0
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if isMark(img.At(x, y)) {
				n++
			}
		}
	}
	return n
}

func decodeJPEG(t testing.TB, b []byte) image.Image {
	t.Helper()
	img, err := jpeg.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the marked screenshot is not a JPEG: %v", err)
	}
	return img
}

// TestMarkScreenshot: on a light and on a dark page, at pixel ratios 1
// and 2, the box of an element in the viewport is drawn around it, its
// label above its top-left corner, and nothing else: not the element off
// screen, not the inside of the box, not the rest of the image; the
// observation's own screenshot is unchanged.
func TestMarkScreenshot(t *testing.T) {
	for _, c := range []struct {
		name  string
		bg    color.RGBA
		scale int
	}{
		{"light", color.RGBA{0xff, 0xff, 0xff, 0xff}, 1},
		{"dark", color.RGBA{0x10, 0x10, 0x18, 0xff}, 1},
		{"light, pixel ratio 2", color.RGBA{0xf4, 0xf4, 0xf4, 0xff}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			shot := solidJPEG(t, 1280*c.scale, 720*c.scale, c.bg)
			orig := bytes.Clone(shot)
			obs := &Observation{
				Viewport:   [2]float64{1280, 720},
				Screenshot: shot,
				Elements: []Element{
					{ID: "bq", InViewport: true, Rect: [4]float64{200, 300, 160, 40}},
					{ID: "kd", InViewport: false, Rect: [4]float64{700, 300, 160, 40}},
				},
			}
			marked, err := MarkScreenshot(obs)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(obs.Screenshot, orig) {
				t.Fatal("the observation's screenshot was changed")
			}
			img := decodeJPEG(t, marked)
			if img.Bounds().Dx() != 1280*c.scale {
				t.Fatalf("size %v", img.Bounds())
			}
			s := c.scale
			px := func(x0, y0, x1, y1 int) image.Rectangle { return image.Rect(x0*s, y0*s, x1*s, y1*s) }
			// The box, just outside the element's edges (2 px wide).
			for name, r := range map[string]image.Rectangle{
				"left":   px(198, 310, 200, 330),
				"right":  px(360, 310, 362, 330),
				"bottom": px(220, 340, 340, 342),
			} {
				if n := marksIn(img, r); n < r.Dx()*r.Dy()/2 {
					t.Errorf("the box's %s edge has %d mark pixels of %d", name, n, r.Dx()*r.Dy())
				}
			}
			// The label, above the top-left corner: mark-coloured, with
			// dark text on it.
			label := px(198, 280, 214, 298)
			if n := marksIn(img, label); n < label.Dx()*label.Dy()/3 {
				t.Errorf("the label has %d mark pixels", n)
			}
			dark := 0
			for y := label.Min.Y; y < label.Max.Y; y++ {
				for x := label.Min.X; x < label.Max.X; x++ {
					if r, g, b, _ := img.At(x, y).RGBA(); r>>8 < 0x60 && g>>8 < 0x60 && b>>8 < 0x60 {
						dark++
					}
				}
			}
			if c.name != "dark" && dark == 0 {
				t.Errorf("the label has no text")
			}
			// Nothing inside the box, around the element off screen, or
			// elsewhere.
			for name, r := range map[string]image.Rectangle{
				"inside":     px(204, 304, 356, 336),
				"off screen": px(690, 290, 870, 350),
				"elsewhere":  px(0, 400, 1280, 720),
				"the top":    px(0, 0, 1280, 250),
			} {
				if n := marksIn(img, r); n > 0 {
					t.Errorf("%s: %d mark pixels", name, n)
				}
			}
		})
	}
	if _, err := MarkScreenshot(&Observation{Screenshot: []byte("not a jpeg")}); err == nil {
		t.Error("a screenshot that is not a JPEG was marked")
	}
	if _, err := MarkScreenshot(&Observation{}); err == nil {
		t.Error("an observation without a screenshot was marked")
	}
}

// TestMarkLabelsApart: elements that share a top-left corner (a card, a
// link in it, an icon in that) get labels that do not cover each other.
func TestMarkLabelsApart(t *testing.T) {
	var els []Element
	for i, w := range []float64{300, 200, 100, 50} {
		els = append(els, Element{ID: encodeID(uint64(398 + i)), InViewport: true, Rect: [4]float64{100, 100, w, 40}})
	}
	img := image.NewRGBA(image.Rect(0, 0, 640, 360))
	placed := drawMarks(img, els, [2]float64{640, 360})
	if len(placed) != len(els) {
		t.Fatalf("%d labels for %d elements", len(placed), len(els))
	}
	for i := range placed {
		for j := i + 1; j < len(placed); j++ {
			if placed[i].Overlaps(placed[j]) {
				t.Errorf("labels %d %v and %d %v overlap", i, placed[i], j, placed[j])
			}
		}
	}
}

// TestMarkScreenshotPage: the screenshot Chromium takes of the form page,
// marked: the box of a known field is where the field is.
func TestMarkScreenshotPage(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageForm))
	obs := observe(t, tab, p, ObserveOptions{Screenshot: true})
	orig := bytes.Clone(obs.Screenshot)
	e := find(t, obs, resolve(t, tab, p, "#text"))
	if !e.InViewport {
		t.Fatalf("#text is not in the viewport: %+v", e)
	}
	marked, err := MarkScreenshot(obs)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(obs.Screenshot, orig) {
		t.Fatal("the observation's screenshot was changed")
	}
	clean, img := decodeJPEG(t, obs.Screenshot), decodeJPEG(t, marked)
	x, y, w, h := int(e.Rect[0]), int(e.Rect[1]), int(e.Rect[2]), int(e.Rect[3])
	left := image.Rect(x-3, y+h/4, x-1, y+3*h/4)
	if n := marksIn(img, left); n < left.Dx()*left.Dy()/2 || marksIn(clean, left) > 0 {
		t.Errorf("left of #text %v: %d mark pixels in the marked image, %d in the clean one", left, n, marksIn(clean, left))
	}
	below := image.Rect(x+w/4, y+h+1, x+3*w/4, y+h+3)
	if n := marksIn(img, below); n < below.Dx()*below.Dy()/2 {
		t.Errorf("below #text %v: %d mark pixels", below, n)
	}
	t.Logf("%d elements, clean %d bytes, marked %d bytes", len(obs.Elements), len(obs.Screenshot), len(marked))
	if d := os.Getenv("MARKS_OUT"); d != "" {
		_ = os.WriteFile(d, marked, 0o644)
	}
}

// BenchmarkMarks marks a 1280×720 screenshot with 100 elements in view.
func BenchmarkMarks(b *testing.B) {
	img := image.NewRGBA(image.Rect(0, 0, 1280, 720))
	for y := 0; y < 720; y++ {
		for x := 0; x < 1280; x++ {
			o := img.PixOffset(x, y)
			img.Pix[o], img.Pix[o+1], img.Pix[o+2], img.Pix[o+3] = uint8(x), uint8(y), uint8((x^y)&0x3f+0xc0), 0xff
		}
	}
	var shot bytes.Buffer
	if err := jpeg.Encode(&shot, img, &jpeg.Options{Quality: DefaultJPEGQuality}); err != nil {
		b.Fatal(err)
	}
	obs := &Observation{Viewport: [2]float64{1280, 720}, Screenshot: shot.Bytes()}
	for i := 0; i < 100; i++ {
		obs.Elements = append(obs.Elements, Element{ID: encodeID(uint64(i + 1)), InViewport: true,
			Rect: [4]float64{float64(20 + (i%10)*125), float64(20 + (i/10)*70), 100, 30}})
	}
	// CPU time as well as wall time: on a loaded machine the wall time
	// says more about the other processes.
	var before, after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	n := 0
	for b.Loop() {
		if _, err := MarkScreenshot(obs); err != nil {
			b.Fatal(err)
		}
		n++
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/op")
	b.ReportMetric(float64(len(obs.Elements)), "elements")
}
