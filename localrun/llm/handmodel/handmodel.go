// Package handmodel is a language model played by hand: a small server
// speaking OpenAI chat completions that writes each request to a file in a
// directory and answers with the file a person, or another program, writes
// next to it. It lets the agent run where no model server can be installed,
// with anyone (or anything) that can read a prompt playing the model.
// `abctl model-by-hand` runs it; docs/model-by-hand.md is the user's guide.
//
// # Protocol
//
// The server works in one directory, DIR (made with mode 0700 when
// missing; files are written with mode 0600). Only one server may use a
// directory at a time.
//
// Each POST /v1/chat/completions gets the next sequence number N, from 1,
// continuing after the highest number found in DIR when the server starts,
// so that a restart never overwrites a record. N is written with at least 4
// digits (0001, ..., 9999, 10000). The server writes, each file atomically
// (a temporary file renamed), in this order:
//
//   - NNNN.image-K.EXT, one per image sent as a data URL (K from 1; EXT is
//     jpg, png, gif or webp after the data URL's type);
//   - NNNN.request.json: the request body as received, re-encoded with
//     indentation, each image data URL replaced by its file's name;
//   - NNNN.prompt.txt: the request for a person: the call kind (the
//     X-Abctl-Call-Kind header), the model name, the JSON schema the answer
//     must follow if the request gave one, then each message as a line
//     "=== system ===", "=== user ===" or "=== assistant ===" followed by
//     its text, images as "[image: NNNN.image-1.jpg]";
//   - NNNN.waiting, empty: its presence means "answer me". Pending lists
//     these.
//
// The player writes NNNN.answer.txt: the assistant message's content,
// verbatim (normally one JSON object). It should write a temporary file in
// DIR whose name does not start with a digit and rename it (WriteAnswer
// does so). The server looks every poll interval (100 ms) and takes the
// answer once the file exists, is not empty, and had the same size on two
// looks in a row. It then removes NNNN.waiting, answers the HTTP request
// with a chat.completion (one choice, role assistant, that content,
// finish_reason "stop", estimated usage) and writes NNNN.answered.json:
// {"seq", "kind", "answer_file", "waited_ms", "usage"}.
//
// Usage is estimated, since no tokenizer is at hand: prompt_tokens is the
// number of characters of all message texts divided by 4, rounded up, plus
// 765 per image (a 1024×1024 image at OpenAI's high detail);
// completion_tokens is the answer's characters divided by 4, rounded up.
// The usage object carries "estimated": true.
//
// A request not answered within the answer timeout (30 minutes by default)
// gets 504 with an OpenAI-style error naming the file that was not written,
// and the header X-Should-Retry: false so that the client does not send it
// again. A request its client gives up on (the connection closed, the
// client's timeout) has its NNNN.waiting removed. When the server shuts
// down, waiting requests get 503 and their markers are removed; markers
// left behind by a server that crashed are removed when the next one
// starts, since nobody waits for them any more.
//
// Requests with "stream": true get 400 (the engine never streams). GET
// /v1/models lists the one model, named by WithModel ("by-hand" by
// default). Any other path gets 404, in OpenAI's error format. Requests are
// served concurrently, each with its own number.
package handmodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults of the server.
const (
	// DefaultModel is the model name GET /v1/models lists and answers
	// carry.
	DefaultModel = "by-hand"
	// DefaultAnswerTimeout is how long a request waits for its answer.
	DefaultAnswerTimeout = 30 * time.Minute
	// DefaultPollInterval is how often the server looks for answers.
	DefaultPollInterval = 100 * time.Millisecond
	// ImageTokens is the estimated prompt tokens of one image.
	ImageTokens = 765
	// maxBody caps a request body (images included).
	maxBody = 64 << 20
)

// File names of request N, relative to the directory.

// RequestFile is "NNNN.request.json".
func RequestFile(n int) string { return seq(n) + ".request.json" }

// PromptFile is "NNNN.prompt.txt".
func PromptFile(n int) string { return seq(n) + ".prompt.txt" }

// WaitingFile is "NNNN.waiting".
func WaitingFile(n int) string { return seq(n) + ".waiting" }

// AnswerFile is "NNNN.answer.txt".
func AnswerFile(n int) string { return seq(n) + ".answer.txt" }

// AnsweredFile is "NNNN.answered.json".
func AnsweredFile(n int) string { return seq(n) + ".answered.json" }

// ImageFile is "NNNN.image-K.ext"; ext is "jpg", "png", "gif" or "webp".
func ImageFile(n, k int, ext string) string { return fmt.Sprintf("%s.image-%d.%s", seq(n), k, ext) }

func seq(n int) string { return fmt.Sprintf("%04d", n) }

// seqName matches the files of a request, its number in group 1.
var seqName = regexp.MustCompile(`^([0-9]+)\.`)

// Option configures a Server.
type Option func(*Server)

// WithModel sets the model name listed and answered with (DefaultModel).
func WithModel(name string) Option { return func(s *Server) { s.model = name } }

// WithAnswerTimeout sets how long a request waits for its answer file
// (DefaultAnswerTimeout).
func WithAnswerTimeout(d time.Duration) Option { return func(s *Server) { s.timeout = d } }

// WithPollInterval sets how often answer files are looked for
// (DefaultPollInterval).
func WithPollInterval(d time.Duration) Option { return func(s *Server) { s.poll = d } }

// WithLogger sends a record per request, answer, timeout and cancellation
// to l (default: none).
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// Server is a model played by hand over one directory.
type Server struct {
	dir     string
	model   string
	timeout time.Duration
	poll    time.Duration
	log     *slog.Logger

	mu   sync.Mutex
	last int // the highest sequence number used

	stopping chan struct{} // closed when Serve's context ends
	stopOnce sync.Once
}

// New returns a server over dir, which it creates (mode 0700) when
// missing. Numbering continues after the highest number of a file in dir;
// waiting markers left there by an earlier server are removed.
func New(dir string, opts ...Option) (*Server, error) {
	s := &Server{dir: dir, model: DefaultModel, timeout: DefaultAnswerTimeout, poll: DefaultPollInterval,
		log: slog.New(slog.DiscardHandler), stopping: make(chan struct{})}
	for _, o := range opts {
		o(s)
	}
	switch {
	case dir == "":
		return nil, errors.New("handmodel: no directory given")
	case strings.TrimSpace(s.model) == "":
		return nil, errors.New("handmodel: the model name is empty")
	case s.timeout <= 0:
		return nil, fmt.Errorf("handmodel: answer timeout %s: want a positive duration", s.timeout)
	case s.poll <= 0:
		return nil, fmt.Errorf("handmodel: poll interval %s: want a positive duration", s.poll)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("handmodel: creating the directory: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("handmodel: reading the directory: %w", err)
	}
	for _, e := range entries {
		m := seqName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			continue // too many digits to be ours
		}
		s.last = max(s.last, n)
		if e.Name() == WaitingFile(n) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("handmodel: removing a stale waiting marker: %w", err)
			}
			s.log.Info("removed a waiting marker left by an earlier server; its request is gone", "seq", n)
		}
	}
	return s, nil
}

// Dir is the server's directory.
func (s *Server) Dir() string { return s.dir }

// Model is the model name the server lists and answers with.
func (s *Server) Model() string { return s.model }

// Handler serves the OpenAI-compatible API: POST /v1/chat/completions and
// GET /v1/models.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", s.serveChat)
	mux.HandleFunc("/v1/models", s.serveModels)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found",
			fmt.Sprintf("no route %s %s: this model played by hand serves POST /v1/chat/completions and GET /v1/models", r.Method, r.URL.Path))
	})
	return mux
}

// Serve serves Handler on l until ctx ends, then shuts down: requests
// still waiting for an answer get 503, the others finish. It returns nil
// after a shutdown caused by ctx, else the listener's error.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 30 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	s.stopOnce.Do(func() { close(s.stopping) })
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := hs.Shutdown(sctx)
	<-done
	return err
}

func (s *Server) serveModels(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "GET /v1/models lists the model; "+r.Method+" is not served")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []map[string]any{
		{"id": s.model, "object": "model", "created": 0, "owned_by": "abctl-model-by-hand"},
	}})
}

// Pending lists the numbers of the requests waiting for an answer in dir
// (those with a NNNN.waiting file), in increasing order.
func Pending(dir string) ([]int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("handmodel: listing the requests waiting in %s: %w", dir, err)
	}
	var out []int
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".waiting")
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(name); err == nil && n > 0 && e.Name() == WaitingFile(n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// WriteAnswer writes content as the answer to request n in dir, the way
// players should: a temporary file renamed into place.
func WriteAnswer(dir string, n int, content string) error {
	if n <= 0 {
		return fmt.Errorf("handmodel: request number %d: numbers start at 1", n)
	}
	if content == "" {
		return fmt.Errorf("handmodel: the answer to request %d is empty; the server waits for a non-empty file", n)
	}
	return writeFile(dir, AnswerFile(n), []byte(content))
}

// writeFile writes name in dir atomically: a temporary file (named with a
// leading dot, so never taken for a request's file) renamed into place.
func writeFile(dir, name string, data []byte) error {
	f, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return fmt.Errorf("handmodel: writing %s: %w", name, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o600)
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("handmodel: writing %s: %w", name, err)
	}
	return nil
}

// next reserves the next sequence number.
func (s *Server) next() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last++
	return s.last
}

// errorBody is OpenAI's error format.
type errorBody struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    string `json:"code,omitempty"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	var b errorBody
	b.Error.Message, b.Error.Code = msg, code
	b.Error.Type = "invalid_request_error"
	if status >= 500 {
		b.Error.Type = "server_error"
	}
	writeJSON(w, status, b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}

// readBody reads at most maxBody bytes.
func readBody(r *http.Request) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("reading the request body: %v", err)
	}
	if len(data) > maxBody {
		return nil, fmt.Errorf("the request body is larger than %d MiB", maxBody>>20)
	}
	return data, nil
}
