package llm_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/localrun/llm"
)

// sleeper records the waits between retries instead of sleeping.
type sleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeper) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeper) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// newModel builds a model for cfg that records its retry waits.
func newModel(t *testing.T, cfg llm.Config) (llm.Model, *sleeper) {
	t.Helper()
	s := &sleeper{}
	m, err := llm.New(cfg, llm.WithSleeper(s.sleep))
	if err != nil {
		t.Fatalf("llm.New(%v): %v", cfg, err)
	}
	return m, s
}

// testCtx is a context for one test, with a deadline that only catches a
// hang.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// jpegBytes is a small real JPEG.
func jpegBytes(t testing.TB) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 16, 8))
	for x := range 16 {
		for y := range 8 {
			img.Set(x, y, color.RGBA{uint8(x * 16), uint8(y * 32), 200, 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func boolp(b bool) *bool { return &b }
