package handmodel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/handmodel"
)

// served is a handmodel server running on loopback for one test.
type served struct {
	srv  *handmodel.Server
	dir  string
	base string // http://127.0.0.1:PORT/v1
	stop func() error
}

func serve(t *testing.T, dir string, opts ...handmodel.Option) *served {
	t.Helper()
	if dir == "" {
		dir = filepath.Join(t.TempDir(), "hand")
	}
	s, err := handmodel.New(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	var once sync.Once
	var serveErr error
	stop := func() error {
		once.Do(func() { cancel(); serveErr = <-done })
		return serveErr
	}
	t.Cleanup(func() { _ = stop() })
	return &served{srv: s, dir: dir, base: "http://" + l.Addr().String() + "/v1", stop: stop}
}

// model is the engine's own OpenAI-compatible client pointed at s.
func (s *served) model(t *testing.T, vision bool) llm.Model {
	t.Helper()
	m, err := llm.New(llm.Config{Provider: llm.ProviderOpenAICompatible, BaseURL: s.base, Model: "by-hand", Vision: &vision, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// waitFor polls cond, as a player watching the directory does, and
// gives up after a minute. It may run on any goroutine.
func waitFor(what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(time.Minute)
	for {
		ok, err := cond()
		if ok || err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after a minute: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// pendingIs waits until the requests waiting in dir are want.
func pendingIs(dir string, want ...int) error {
	var got []int
	return waitFor(fmt.Sprintf("the pending requests are not %v", want), func() (bool, error) {
		var err error
		got, err = handmodel.Pending(dir)
		return slices.Equal(got, want), err
	})
}

// awaitPending is pendingIs on the test's goroutine.
func awaitPending(t *testing.T, dir string, want ...int) {
	t.Helper()
	if err := pendingIs(dir, want...); err != nil {
		t.Fatal(err)
	}
}

// answerWhenPending, on its own goroutine, waits for the requests want and
// answers each by answer(n); failures are reported on t.
func answerWhenPending(t *testing.T, dir string, answer func(n int) (string, error), want ...int) {
	go func() {
		err := pendingIs(dir, want...)
		for _, n := range want {
			if err != nil {
				break
			}
			var text string
			if text, err = answer(n); err == nil {
				err = handmodel.WriteAnswer(dir, n, text)
			}
		}
		if err != nil {
			t.Errorf("player: %v", err)
		}
	}()
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func readFile(dir, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	return string(b), err
}

func pngImage(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// post sends a raw chat completion request.
func post(ctx context.Context, t *testing.T, url, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err.Error()
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}

const priceSchema = `{"type":"object","properties":{"price":{"type":"number"}},"required":["price"],"additionalProperties":false}`

func TestAnswerWrittenByHandReachesTheClient(t *testing.T) {
	s := serve(t, "")
	img := pngImage(t)
	answerWhenPending(t, s.dir, func(int) (string, error) {
		reqJSON, err := readFile(s.dir, "0001.request.json")
		if err != nil {
			return "", err
		}
		if strings.Contains(reqJSON, "data:image") || !strings.Contains(reqJSON, `"url": "0001.image-1.png"`) {
			return "", fmt.Errorf("request.json keeps the data URL or lacks the image's file name:\n%s", reqJSON)
		}
		var rec struct {
			Model          string `json:"model"`
			ResponseFormat struct {
				JSONSchema struct {
					Name string `json:"name"`
				} `json:"json_schema"`
			} `json:"response_format"`
		}
		if err := json.Unmarshal([]byte(reqJSON), &rec); err != nil || rec.Model != "by-hand" || rec.ResponseFormat.JSONSchema.Name != "price" {
			return "", fmt.Errorf("request.json does not decode to the request (%v): %+v", err, rec)
		}
		if got, err := readFile(s.dir, "0001.image-1.png"); err != nil || got != string(img) {
			return "", fmt.Errorf("0001.image-1.png is not the image sent (%v)", err)
		}
		prompt, err := readFile(s.dir, "0001.prompt.txt")
		if err != nil {
			return "", err
		}
		for _, want := range []string{
			"kind: extract\n", "model: by-hand\n", `following the schema "price"`, "answer file: 0001.answer.txt",
			`"price": {`, `"type": "number"`,
			"\n=== system ===\nYou read prices.\n",
			"\n=== user ===\nWhat does the red pixel cost?\n\n[image: 0001.image-1.png]\n",
		} {
			if !strings.Contains(prompt, want) {
				return "", fmt.Errorf("prompt.txt lacks %q:\n%s", want, prompt)
			}
		}
		return `{"price": 18.5}`, nil
	}, 1)
	resp, err := s.model(t, true).Complete(context.Background(), &llm.Request{
		Kind:     llm.KindExtract,
		System:   "You read prices.",
		Messages: []llm.Message{llm.User(llm.Text("What does the red pixel cost?"), llm.Image(img))},
		Schema:   &llm.Schema{Name: "price", JSON: json.RawMessage(priceSchema)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.JSON) != `{"price":18.5}` || resp.Stop != "stop" || resp.Model != "by-hand" {
		t.Errorf("answer %s (stop %q, model %q), want {\"price\":18.5} from by-hand", resp.JSON, resp.Stop, resp.Model)
	}
	// "You read prices." and the question: 16 + 29 characters, 12 tokens;
	// one image, 765; the answer's 15 characters, 4.
	if want := (llm.Usage{InputTokens: 12 + 765, OutputTokens: 4}); resp.Usage != want {
		t.Errorf("usage %+v, want %+v", resp.Usage, want)
	}
	var rec handmodel.Answered
	if err := json.Unmarshal([]byte(read(t, s.dir, "0001.answered.json")), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Seq != 1 || rec.Kind != "extract" || rec.AnswerFile != "0001.answer.txt" || !rec.Usage.Estimated ||
		rec.Usage.PromptTokens != 777 || rec.Usage.CompletionTokens != 4 || rec.Usage.TotalTokens != 781 || rec.WaitedMS < 0 {
		t.Errorf("answered.json %+v", rec)
	}
	if p, _ := handmodel.Pending(s.dir); len(p) != 0 {
		t.Errorf("still pending after the answer: %v", p)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "0001.waiting")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("0001.waiting still there: %v", err)
	}
}

func TestNumberingContinuesAfterARestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hand")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// Files of an earlier server, one of its requests left waiting by a
	// crash, and files that are not a request's.
	for _, name := range []string{"0007.request.json", "0007.answer.txt", "0003.waiting", "notes.txt", ".0009.answer.txt.1.tmp"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := serve(t, dir)
	if p, err := handmodel.Pending(dir); err != nil || len(p) != 0 {
		t.Errorf("the stale waiting marker of an earlier server was kept: %v %v", p, err)
	}
	answerWhenPending(t, dir, func(int) (string, error) { return "eight", nil }, 8)
	resp, err := s.model(t, false).Complete(context.Background(), &llm.Request{Kind: llm.KindPrompt, Messages: []llm.Message{llm.UserText("count")}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "eight" {
		t.Errorf("answer %q, want eight", resp.Text)
	}
	if got := read(t, dir, "0007.answer.txt"); got != "x" {
		t.Errorf("0007.answer.txt overwritten: %q", got)
	}
	if prompt := read(t, dir, "0008.prompt.txt"); !strings.Contains(prompt, "answer: free text") || !strings.Contains(prompt, "=== user ===\ncount\n") {
		t.Errorf("prompt.txt of a request without a schema:\n%s", prompt)
	}
}

func TestUnansweredRequestTimesOutWithoutRetry(t *testing.T) {
	s := serve(t, "", handmodel.WithAnswerTimeout(200*time.Millisecond))
	_, err := s.model(t, false).Complete(context.Background(), &llm.Request{Kind: llm.KindPlan, Messages: []llm.Message{llm.UserText("anyone?")}})
	var le *llm.Error
	if !errors.As(err, &le) || le.StatusCode != http.StatusGatewayTimeout || le.Attempts != 1 ||
		!strings.Contains(err.Error(), filepath.Join(s.dir, "0001.answer.txt")+" was not written within 200ms") {
		t.Fatalf("error %v, want one 504 attempt naming 0001.answer.txt", err)
	}
	if p, _ := handmodel.Pending(s.dir); len(p) != 0 {
		t.Errorf("still pending after the timeout: %v", p)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "0002.request.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the client sent the request again: %v", err)
	}
}

func TestCancelledRequestRemovesItsMarker(t *testing.T) {
	s := serve(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *http.Response, 1)
	go func() {
		resp, _ := post(ctx, t, s.base+"/chat/completions", `{"model":"by-hand","messages":[{"role":"user","content":"hello"}]}`)
		done <- resp
	}()
	awaitPending(t, s.dir, 1)
	cancel()
	if resp := <-done; resp != nil {
		t.Errorf("a cancelled request got an answer: %s", resp.Status)
	}
	awaitPending(t, s.dir)
	// An answer written afterwards is for nobody; the next request has
	// its own number.
	answerWhenPending(t, s.dir, func(int) (string, error) { return "second", nil }, 2)
	resp, body := post(context.Background(), t, s.base+"/chat/completions", `{"model":"by-hand","messages":[{"role":"user","content":"again"}]}`)
	if resp == nil || resp.StatusCode != http.StatusOK || !strings.Contains(body, `"content":"second"`) {
		t.Errorf("second request: %v %s", resp, body)
	}
}

func TestShutdownAnswersWaitingRequests503(t *testing.T) {
	s := serve(t, "")
	type result struct {
		resp *http.Response
		body string
	}
	done := make(chan result, 1)
	go func() {
		resp, body := post(context.Background(), t, s.base+"/chat/completions", `{"model":"by-hand","messages":[{"role":"user","content":"hello"}]}`)
		done <- result{resp, body}
	}()
	awaitPending(t, s.dir, 1)
	if err := s.stop(); err != nil {
		t.Errorf("Serve after shutdown: %v", err)
	}
	r := <-done
	if r.resp == nil || r.resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(r.body, "shutting down") {
		t.Errorf("waiting request at shutdown: %v %s", r.resp, r.body)
	}
	if p, _ := handmodel.Pending(s.dir); len(p) != 0 {
		t.Errorf("still pending after shutdown: %v", p)
	}
}

func TestRefusedRequestsAndOtherRoutes(t *testing.T) {
	s := serve(t, "", handmodel.WithModel("player-1"))
	ctx := context.Background()
	for _, tc := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"stream", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, 400, `\"stream\": true is not supported`},
		{"no messages", `{"model":"m","messages":[]}`, 400, "messages: want a non-empty list"},
		{"not JSON", `hello`, 400, "the body is not a JSON object"},
		{"bad image", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:text/plain;base64,aGk="}}]}]}`, 400, "want base64 JPEG, PNG, GIF or WebP"},
	} {
		resp, body := post(ctx, t, s.base+"/chat/completions", tc.body)
		if resp == nil || resp.StatusCode != tc.status || !strings.Contains(body, tc.want) || !strings.Contains(body, `"error":{`) {
			t.Errorf("%s: %v %s, want %d with %q", tc.name, resp, body, tc.status, tc.want)
		}
	}
	resp, body := post(ctx, t, s.base+"/completions", `{}`)
	if resp == nil || resp.StatusCode != http.StatusNotFound || !strings.Contains(body, `"error":{`) {
		t.Errorf("other path: %v %s", resp, body)
	}
	r, err := http.Get(s.base + "/models")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(r.Body).Decode(&list); err != nil || r.StatusCode != 200 || len(list.Data) != 1 || list.Data[0].ID != "player-1" {
		t.Errorf("GET /v1/models: %d %+v %v", r.StatusCode, list, err)
	}
	if p, _ := handmodel.Pending(s.dir); len(p) != 0 {
		t.Errorf("refused requests left markers: %v", p)
	}
}

func TestConcurrentRequestsGetTheirOwnAnswers(t *testing.T) {
	s := serve(t, "")
	m := s.model(t, false)
	const calls = 3
	// The player answers each request with the number its prompt asks
	// for, once all of them wait.
	answerWhenPending(t, s.dir, func(n int) (string, error) {
		prompt, err := readFile(s.dir, handmodel.PromptFile(n))
		_, q, _ := strings.Cut(prompt, "=== user ===\nquestion ")
		return fmt.Sprintf(`{"echo": %s}`, strings.TrimSpace(q)), err
	}, 1, 2, 3)
	var wg sync.WaitGroup
	got := make([]string, calls)
	errs := make([]error, calls)
	for i := range calls {
		wg.Go(func() {
			resp, err := m.Complete(context.Background(), &llm.Request{Kind: llm.KindPlan,
				Messages: []llm.Message{llm.UserText(fmt.Sprintf("question %d", i))},
				Schema:   &llm.Schema{JSON: json.RawMessage(`{"type":"object","properties":{"echo":{"type":"integer"}}}`)}})
			if err == nil {
				got[i] = string(resp.JSON)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i := range calls {
		if want := fmt.Sprintf(`{"echo":%d}`, i); errs[i] != nil || got[i] != want {
			t.Errorf("call %d: %s %v, want %s", i, got[i], errs[i], want)
		}
	}
}

func TestNewRefusesBadSettings(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		dir  string
		opts []handmodel.Option
		want string
	}{
		{"no dir", "", nil, "no directory"},
		{"empty model", dir, []handmodel.Option{handmodel.WithModel(" ")}, "model name is empty"},
		{"zero timeout", dir, []handmodel.Option{handmodel.WithAnswerTimeout(0)}, "answer timeout 0s"},
	} {
		if _, err := handmodel.New(tc.dir, tc.opts...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	if err := handmodel.WriteAnswer(dir, 1, ""); err == nil {
		t.Error("WriteAnswer took an empty answer")
	}
	if _, err := handmodel.Pending(filepath.Join(dir, "missing")); err == nil {
		t.Error("Pending of a missing directory: no error")
	}
}
