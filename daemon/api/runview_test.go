package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/artifacts"
	"github.com/abctl/abctl/daemon/runview"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/boltstore"
)

// viewEnv is a server with runs but no runner: the tests write runs into
// the store in the states they need and read them over HTTP.
type viewEnv struct {
	t    *testing.T
	st   store.Store
	runs *Runs
	srv  *httptest.Server
	org  string
	key  string
}

func newViewEnv(t *testing.T, signed bool) *viewEnv {
	t.Helper()
	secret := bytes.Repeat([]byte{3}, store.SecretSize)
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "runs.db"), store.Options{Secret: secret, RunViews: runview.Views{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	org, key, err := st.CreateOrganization(t.Context(), "views")
	if err != nil {
		t.Fatal(err)
	}
	// A fixed clock: both answers sign their URLs with the same expiry.
	links := &runview.Links{Now: func() time.Time { return time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC) }}
	if signed {
		if links.Signer, err = artifacts.NewSigner(secret); err != nil {
			t.Fatal(err)
		}
	}
	runs := &Runs{Links: links}
	srv := httptest.NewServer(NewServer(st, nil, WithRuns(runs)))
	t.Cleanup(srv.Close)
	return &viewEnv{t: t, st: st, runs: runs, srv: srv, org: org.ID, key: key}
}

// get answers GET path with the API key, the request's Host set to host
// when it is not "".
func (e *viewEnv) get(path, host string) (int, []byte) {
	e.t.Helper()
	req, err := http.NewRequest("GET", e.srv.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("x-api-key", e.key)
	if host != "" {
		req.Host = host
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.StatusCode, body
}

// check asserts that GET /v1/runs/{id}, through whatever address, answers
// exactly the bytes of the answer built from the stored record.
func (e *viewEnv) check(id string) {
	e.t.Helper()
	rec, err := e.st.Runs().Get(e.t.Context(), e.org, id)
	if err != nil {
		e.t.Fatal(err)
	}
	u, _ := url.Parse(e.srv.URL)
	for _, host := range []string{"", "localhost:" + u.Port()} {
		base := e.srv.URL
		if host != "" {
			base = "http://" + host
		}
		want, err := marshalJSON(e.runs.Links.Run(rec, base))
		if err != nil {
			e.t.Fatal(err)
		}
		status, got := e.get("/v1/runs/"+id, host)
		if status != http.StatusOK || !bytes.Equal(got, want) {
			e.t.Fatalf("GET run %s (%s) through %s: %d\n got %s\nwant %s", id, rec.Status, base, status, got, want)
		}
	}
}

func (e *viewEnv) create(typ client.RunType) string {
	e.t.Helper()
	rec := &store.RunRecord{ID: e.st.Runs().NewID(typ), OrgID: e.org, Type: typ, Status: client.RunStatusQueued,
		RunRequest: json.RawMessage(`{"prompt":"Compare <prices> & report","url":"https://example.com/"}`)}
	if typ != client.RunTypeWorkflowRun {
		rec.Task = &client.TaskRunRequest{Prompt: "Compare <prices> & report", BrowserSessionID: "pbs_7"}
	}
	if err := e.st.Runs().Create(e.t.Context(), rec); err != nil {
		e.t.Fatal(err)
	}
	return rec.ID
}

func (e *viewEnv) update(id string, change func(*store.RunRecord)) {
	e.t.Helper()
	_, err := e.st.Runs().Update(e.t.Context(), e.org, id, func(r *store.RunRecord) error { change(r); return nil })
	if err != nil {
		e.t.Fatal(err)
	}
}

func testFile(id, name string, typ client.ArtifactType, sec int) store.RunFile {
	return store.RunFile{ID: id, Type: typ, Name: name, Size: int64(len(name)), SHA256: "0f",
		CreatedAt: client.NewTime(time.Date(2026, 11, 24, 11, 0, sec, 0, time.UTC))}
}

// TestGetRunFromViewEqualsRecordAnswer: for every run type and every state
// a run passes through, with screenshots, a recording and downloads, GET
// answers byte for byte what the answer built from the record encodes to,
// with the URLs of the address the request came through.
func TestGetRunFromViewEqualsRecordAnswer(t *testing.T) {
	e := newViewEnv(t, true)
	steps := 4
	for _, typ := range []client.RunType{client.RunTypeTaskV1, client.RunTypeTaskV2, client.RunTypeWorkflowRun} {
		for _, end := range []client.RunStatus{client.RunStatusCompleted, client.RunStatusFailed,
			client.RunStatusTerminated, client.RunStatusTimedOut, client.RunStatusCanceled} {
			id := e.create(typ)
			e.check(id)
			e.update(id, func(r *store.RunRecord) { r.Status = client.RunStatusRunning })
			e.check(id)
			e.update(id, func(r *store.RunRecord) {
				r.StepCount = &steps
				r.Files = append(r.Files, testFile("a_1", "action-1.jpg", client.ArtifactScreenshotAction, 1),
					testFile("a_2", "action-2.jpg", client.ArtifactScreenshotAction, 2))
			})
			e.check(id)
			e.update(id, func(r *store.RunRecord) {
				r.Status = end
				r.Output = json.RawMessage(`{"lowest": "<9.99 €>", "shops": ["a", "b"]}`)
				if end != client.RunStatusCompleted {
					r.FailureReason = `The site answered "503" & closed`
					r.Errors = []json.RawMessage{json.RawMessage(`{"error_code":"site_down"}`)}
				}
				r.Files = append(r.Files, testFile("a_3", "run.webm", client.ArtifactRecording, 3),
					testFile("a_4", "prices 2026.csv", client.ArtifactDownload, 3),
					testFile("a_5", "final.jpg", client.ArtifactScreenshotFinal, 4))
			})
			e.check(id)
		}
	}
}

// TestGetRunURLsWork: the signed URLs of a GET answer from the view are
// the ones the artifact handler accepts.
func TestGetRunURLsWork(t *testing.T) {
	e := newViewEnv(t, true)
	id := e.create(client.RunTypeTaskV1)
	e.update(id, func(r *store.RunRecord) {
		r.Files = []store.RunFile{testFile("a_1", "shot.png", client.ArtifactScreenshot, 1),
			testFile("a_2", "data.csv", client.ArtifactDownload, 2)}
	})
	_, body := e.get("/v1/runs/"+id, "")
	var run client.Run
	if err := json.Unmarshal(body, &run); err != nil {
		t.Fatal(err)
	}
	if len(run.ScreenshotURLs) != 1 || len(run.DownloadedFiles) != 1 || run.GetAppURL() != e.srv.URL+"/v1/runs/"+id {
		t.Fatalf("answer %s", body)
	}
	exp := e.runs.Links.Now().Add(artifacts.DefaultLifetime)
	if want := e.runs.Links.Signer.URL(e.srv.URL, e.org, id, "shot.png", exp); run.ScreenshotURLs[0] != want {
		t.Fatalf("screenshot URL %s, want %s", run.ScreenshotURLs[0], want)
	}
	if want := e.runs.Links.Signer.DownloadURL(e.srv.URL, e.org, id, "data.csv", exp); run.DownloadedFiles[0].URL != want {
		t.Fatalf("download URL %s, want %s", run.DownloadedFiles[0].URL, want)
	}
}

// TestGetRunWithoutSigner: a daemon that cannot sign URLs answers runs
// with files from the record, without file URLs, as before views.
func TestGetRunWithoutSigner(t *testing.T) {
	e := newViewEnv(t, false)
	id := e.create(client.RunTypeWorkflowRun)
	e.check(id)
	e.update(id, func(r *store.RunRecord) {
		r.Files = []store.RunFile{testFile("a_1", "shot.png", client.ArtifactScreenshot, 1)}
	})
	e.check(id)
	if _, body := e.get("/v1/runs/"+id, ""); !strings.Contains(string(body), `"screenshot_urls":null`) {
		t.Fatalf("answer %s", body)
	}
}

func TestGetRunNotFound(t *testing.T) {
	e := newViewEnv(t, true)
	id := e.create(client.RunTypeTaskV1)
	other, _, err := e.st.CreateOrganization(t.Context(), "other")
	if err != nil {
		t.Fatal(err)
	}
	rec := &store.RunRecord{ID: e.st.Runs().NewID(client.RunTypeTaskV1), OrgID: other.ID, Type: client.RunTypeTaskV1, Status: client.RunStatusQueued}
	if err := e.st.Runs().Create(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	for _, missing := range []string{"tsk_1", rec.ID, id + "x"} {
		status, body := e.get("/v1/runs/"+missing, "")
		if want := `{"detail":"Run ` + missing + ` not found"}`; status != http.StatusNotFound || string(body) != want {
			t.Errorf("GET %s: %d %s, want 404 %s", missing, status, body, want)
		}
	}
}

// TestStoredAnswersStateTheirLength: answers sent from stored bytes carry
// Content-Length, also above net/http's 2 KB chunking threshold (an agent
// of a few KB), with the headers every answer has.
func TestStoredAnswersStateTheirLength(t *testing.T) {
	e := newViewEnv(t, true)
	def := &client.AgentDefinition{
		Title:       "Long agent",
		Description: strings.Repeat("A description long enough to pass 2 KB. ", 80),
		WorkflowDefinition: client.WorkflowDefinition{
			Blocks: client.Blocks{&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}, URL: "https://example.com/"}},
		},
	}
	body, err := json.Marshal(map[string]any{"json_definition": def})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", e.srv.URL+"/v1/agents", bytes.NewReader(body))
	req.Header.Set("x-api-key", e.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var agent client.Agent
	if err := json.NewDecoder(resp.Body).Decode(&agent); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("create: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	runID := e.create(client.RunTypeTaskV1)

	for _, path := range []string{"/v1/agents/" + agent.WorkflowPermanentID, "/v1/runs/" + runID} {
		req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
		req.Header.Set("x-api-key", e.key)
		resp, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
		}
		if resp.ContentLength != int64(len(got)) || len(resp.TransferEncoding) != 0 {
			t.Errorf("GET %s: Content-Length %d, Transfer-Encoding %v, for %d bytes", path, resp.ContentLength, resp.TransferEncoding, len(got))
		}
		for k, want := range map[string]string{
			"Content-Type": "application/json", "X-Frame-Options": "DENY",
			"Content-Security-Policy": "frame-ancestors 'none'",
		} {
			if v := resp.Header.Values(k); len(v) != 1 || v[0] != want {
				t.Errorf("GET %s: %s %q, want %q", path, k, v, want)
			}
		}
		if resp.Header.Get("X-Request-Id") == "" {
			t.Errorf("GET %s: no X-Request-Id", path)
		}
	}
	if agent.Description == nil || len(*agent.Description) < 2048 {
		t.Fatal("the agent is too small for the test")
	}
}
