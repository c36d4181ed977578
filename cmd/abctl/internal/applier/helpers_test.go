package applier

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

const testKey = "abk_applier_tests_key_0123456789"

// recorder is an http.RoundTripper that notes every request while it is
// on ("GET /v1/agents/{id}": agent ids replaced; "GET
// /v1/agents?page_size=1": the page size of lists) and the bytes of their
// answers.
type recorder struct {
	next http.RoundTripper

	mu    sync.Mutex
	on    bool
	reqs  []string
	bytes int64
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	r.mu.Lock()
	on := r.on
	if on {
		what := req.Method + " " + shape(req.URL.Path)
		if size := req.URL.Query().Get("page_size"); size != "" {
			what += "?page_size=" + size
		}
		r.reqs = append(r.reqs, what)
	}
	r.mu.Unlock()
	if on && err == nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, r: r}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	r *recorder
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.r.mu.Lock()
	b.r.bytes += int64(n)
	b.r.mu.Unlock()
	return n, err
}

// shape replaces the agent ids of a path with {id}.
func shape(path string) string {
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, "wpid_") {
			parts[i] = "{id}"
		}
	}
	return strings.Join(parts, "/")
}

// count runs fn with the recorder on and returns the requests fn made and
// the bytes of their answers.
func (r *recorder) count(fn func()) (reqs []string, bytes int64) {
	r.mu.Lock()
	r.on, r.reqs, r.bytes = true, nil, 0
	r.mu.Unlock()
	fn()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false
	return r.reqs, r.bytes
}

// service is a real daemon (bbolt in a temporary directory, scripted
// executor) with a plain client and a client whose requests are recorded,
// optionally through a gate that answers some requests itself.
type service struct {
	t              *testing.T
	plain, counted *client.Client
	rec            *recorder
}

// gate answers a request itself (true) or lets it through to the daemon.
type gate func(w http.ResponseWriter, r *http.Request) bool

func startService(t *testing.T, g gate) *service {
	t.Helper()
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: testKey, Executor: &scripted.Executor{}, Workers: 1})
	base := "http://" + addr
	s := &service{t: t, rec: &recorder{next: http.DefaultTransport}}
	s.plain = newClient(t, base, nil)
	if g != nil {
		target, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		proxy := httputil.NewSingleHostReverseProxy(target)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !g(w, r) {
				proxy.ServeHTTP(w, r)
			}
		}))
		t.Cleanup(srv.Close)
		base = srv.URL
	}
	s.counted = newClient(t, base, s.rec)
	return s
}

func newClient(t *testing.T, base string, rt http.RoundTripper) *client.Client {
	t.Helper()
	opts := []client.Option{client.WithBaseURL(base), client.WithAPIKey(testKey), client.WithMaxRetries(0)}
	if rt != nil {
		opts = append(opts, client.WithHTTPClient(&http.Client{Transport: rt}))
	}
	c, err := client.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// refuseTags is a gate that answers every tag route as the hosted
// service's tagging gate does.
func refuseTags(w http.ResponseWriter, r *http.Request) bool {
	if !strings.Contains(r.URL.Path, "/tags") && !strings.HasSuffix(r.URL.Path, "/workflow-tags") {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	io.WriteString(w, `{"detail":"Workflow tagging is not enabled for this organization."}`)
	return true
}

// seed creates agents from, ..., to-1 as `abctl apply` would have (the
// Idempotency-Key of the name "seed-<i>", then the abctl.name tag), with
// four clients at once.
func (s *service) seed(from, to int) {
	t := s.t
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	next := make(chan int)
	for range 4 {
		wg.Go(func() {
			for i := range next {
				name := fmt.Sprintf("seed-%04d", i)
				def := &client.AgentDefinition{
					Title:       fmt.Sprintf("Collect the statements of account %d", i),
					Description: "Signs in to the bank portal and downloads last month's statements.",
					WorkflowDefinition: client.WorkflowDefinition{Blocks: client.Blocks{
						&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}, URL: fmt.Sprintf("https://bank%d.example.com/", i%7)},
						&client.WaitBlock{BlockBase: client.BlockBase{Label: "settle"}, WaitSec: 1},
					}},
				}
				a, err := s.plain.Agents.Create(t.Context(), def, nil, client.WithIdempotencyKey(agentfile.IdempotencyKey(name)))
				if err == nil {
					_, err = s.plain.Agents.ApplyTags(t.Context(), a.WorkflowPermanentID, &client.TagApplyRequest{
						Tags: []client.TagInput{{Key: "abctl.name", Value: name}}})
				}
				if err != nil {
					select {
					case errs <- fmt.Errorf("seed %s: %w", name, err):
					default:
					}
				}
			}
		})
	}
	for i := from; i < to; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

// newApplier is New on the recorded client.
func (s *service) newApplier(opts ...Option) *Applier {
	s.t.Helper()
	ap, err := New(s.t.Context(), s.counted, opts...)
	if err != nil {
		s.t.Fatal(err)
	}
	return ap
}

// get returns the agent at id, nil when there is none (or it is deleted).
func (s *service) get(id string) *client.Agent {
	s.t.Helper()
	a, err := s.plain.Agents.Get(s.t.Context(), id, nil)
	if errors.Is(err, client.ErrNotFound) {
		return nil
	}
	if err != nil {
		s.t.Fatal(err)
	}
	return a
}

// tagsOf returns the tags of the agent at id as key=value strings.
func (s *service) tagsOf(id string) map[string]string {
	s.t.Helper()
	tags, err := s.plain.Agents.GetTags(s.t.Context(), id)
	if err != nil {
		s.t.Fatal(err)
	}
	out := map[string]string{}
	for _, t := range tags.Tags {
		if t.Key != nil {
			out[*t.Key] = t.Value
		}
	}
	return out
}

func parseAgent(t *testing.T, file, text string) *agentfile.Agent {
	t.Helper()
	agents, err := agentfile.Parse(file, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(agents) != 1 {
		t.Fatalf("%s holds %d agents", file, len(agents))
	}
	return agents[0]
}

// contactForm is the agent file of most tests; its name is its file's,
// contact-form.
const contactForm = `title: Fill the contact form
tags: {team: web}
workflow_definition:
  parameters:
    - {key: site, parameter_type: workflow, workflow_parameter_type: string}
  blocks:
    - {block_type: goto_url, label: open, url: "{{site}}/form.html"}
    - {block_type: wait, label: pause, wait_sec: 1}
`

// editorAgent is the definition of an agent made without abctl.
const editorAgent = "title: Made in the editor\nworkflow_definition:\n  parameters: []\n  blocks:\n    - {block_type: wait, label: pause, wait_sec: 1}\n"

// applyOnce is what `abctl run FILE` and `abctl apply -f FILE` do with
// the applier: New, then Apply of the file's agent.
func applyOnce(t *testing.T, c *client.Client, fa *agentfile.Agent) Result {
	t.Helper()
	ap, err := New(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	res := ap.Apply(t.Context(), fa, false)
	if res.Err != nil {
		t.Fatalf("apply %s: %v", fa.Name, res.Err)
	}
	return res
}
