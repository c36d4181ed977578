package agent

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"testing"

	"github.com/abctl/abctl/localrun/engine/page"
	"github.com/abctl/abctl/localrun/engine/steplog"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

// whiteJPEG is a white 1280×720 JPEG.
func whiteJPEG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 1280, 720))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// markPixels counts the pixels of r in the JPEG b that have the marks'
// colour, give or take what JPEG does to it.
func markPixels(t *testing.T, b []byte, r image.Rectangle) int {
	t.Helper()
	img, err := jpeg.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a JPEG: %v", err)
	}
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if c.R > 0xc0 && c.G < 0x60 && c.B > 0xc0 {
				n++
			}
		}
	}
	return n
}

// TestVisionModelGetsMarkedScreenshot: a model that reads images gets the
// screenshot with the ids drawn on it when the prompt lists ids (here a
// locate call, over the wire to the scripted server), the clean one for
// extraction, and the observation's screenshot (the one the run keeps)
// stays clean; a model without vision gets no image. The id it answers
// with brackets and in capitals is the element's.
func TestVisionModelGetsMarkedScreenshot(t *testing.T) {
	srv := llmtest.New(t, llmtest.Step{Kind: llm.KindLocate,
		Reply: llmtest.JSON(map[string]string{"id": "[BQ]", "text": "", "reasoning": "The button."})})
	cfg := srv.OpenAIConfig()
	vision := true
	cfg.Vision = &vision
	m, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	shot := whiteJPEG(t)
	obs := &page.Observation{
		Rendered:   "Page: Shop\n[bq] button \"Buy\"\n",
		Viewport:   [2]float64{1280, 720},
		Screenshot: bytes.Clone(shot),
		Elements:   []page.Element{{ID: "bq", Tag: "button", Text: "Buy", InViewport: true, Rect: [4]float64{300, 200, 120, 40}}},
	}
	a := New(nil, steplog.New(nil, nil, 0), Config{Tag: "1a2b3c4d"})
	loc, err := a.Locate(t.Context(), m, obs, "Buy the item.", "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if loc.ID != "bq" {
		t.Errorf("located %q", loc.ID)
	}
	calls := srv.Calls()
	if len(calls) != 1 || calls[0].ImageCount() != 1 {
		t.Fatalf("calls %+v", calls)
	}
	sent := calls[0].Messages[len(calls[0].Messages)-1].Images[0]
	left := image.Rect(298, 210, 300, 230)
	if n := markPixels(t, sent, left); n < left.Dx()*left.Dy()/2 {
		t.Errorf("the image sent has %d mark pixels left of the button", n)
	}
	if !bytes.Equal(obs.Screenshot, shot) || markPixels(t, obs.Screenshot, image.Rect(0, 0, 1280, 720)) != 0 {
		t.Error("the observation's screenshot was marked")
	}
	// Extraction shows no ids: the clean screenshot.
	msg := userPartsUnmarked(m, "Extract.", obs)
	if len(msg.Parts) != 2 || !bytes.Equal(msg.Parts[1].Image, shot) {
		t.Errorf("extraction's image is not the clean screenshot")
	}
	// Without vision, no image.
	cfg.Vision = new(false)
	blind, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if msg := userParts(blind, "Plan.", obs); len(msg.Parts) != 1 {
		t.Errorf("a model without vision got %d parts", len(msg.Parts))
	}
}
