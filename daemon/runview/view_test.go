package runview

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/artifacts"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/boltstore"
	"github.com/abctl/abctl/internal/jsonenc"
)

var ctx = context.Background()

// testFileURL stands for the daemon's signed URLs: any function of the
// file will do, as long as both answers use the same one.
func testFileURL(f store.RunFile) string {
	return "http://127.0.0.1:8780/artifacts/x/" + f.Name + "?kind=" + string(f.Type) + "&sig=1"
}

const testAppURL = "http://127.0.0.1:8780/v1/runs/x"

// wantAnswer is the answer built from the record, as the daemon's slow
// path builds it.
func wantAnswer(t *testing.T, rec *store.RunRecord, app string, fileURL artifacts.URLFunc) []byte {
	t.Helper()
	b, err := jsonenc.Marshal(Response(rec, app, fileURL))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixture is a store with Views and one organization.
type fixture struct {
	t    *testing.T
	st   store.Store
	path string
	org  string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, path: filepath.Join(t.TempDir(), "abctl.db")}
	f.open(Views{})
	t.Cleanup(func() { f.st.Close() })
	org, _, err := f.st.CreateOrganization(ctx, "views")
	if err != nil {
		t.Fatal(err)
	}
	f.org = org.ID
	return f
}

// open (re)opens the store with views.
func (f *fixture) open(views store.RunViews) {
	f.t.Helper()
	if f.st != nil {
		if err := f.st.Close(); err != nil {
			f.t.Fatal(err)
		}
	}
	st, err := boltstore.Open(f.path, store.Options{RunViews: views})
	if err != nil {
		f.t.Fatal(err)
	}
	f.st = st
}

func (f *fixture) now() client.Time { return client.Now() }

func (f *fixture) newRun(typ client.RunType, mod func(*store.RunRecord)) *store.RunRecord {
	f.t.Helper()
	rec := &store.RunRecord{ID: f.st.Runs().NewID(typ), OrgID: f.org, Type: typ, Status: client.RunStatusCreated,
		RunRequest: json.RawMessage(`{"prompt":"Find <the> price & \u00e9 \"quoted\""}`)}
	if mod != nil {
		mod(rec)
	}
	if err := f.st.Runs().Create(ctx, rec); err != nil {
		f.t.Fatal(err)
	}
	return rec
}

func (f *fixture) updateRun(id string, change func(*store.RunRecord)) {
	f.t.Helper()
	if _, err := f.st.Runs().Update(ctx, f.org, id, func(r *store.RunRecord) error { change(r); return nil }); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) get(id string) *store.RunRecord {
	f.t.Helper()
	rec, err := f.st.Runs().Get(ctx, f.org, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return rec
}

// storedView returns a copy of the view stored for a run, nil when it has
// none.
func (f *fixture) storedView(id string) View {
	f.t.Helper()
	var view View
	err := f.st.Runs().View(ctx, f.org, id, func(v []byte) error {
		view = append(View(nil), v...)
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNoRunView) {
		f.t.Fatal(err)
	}
	return view
}

// checkView asserts that the stored answer of the run, filled in, is byte
// for byte the answer built from its stored record.
func (f *fixture) checkView(id string) {
	f.t.Helper()
	rec := f.get(id)
	got, err := f.storedView(id).AppendJSON([]byte("prefix:"), testAppURL, testFileURL)
	if err != nil {
		f.t.Fatalf("AppendJSON(%s): %v", id, err)
	}
	want := append([]byte("prefix:"), wantAnswer(f.t, rec, testAppURL, testFileURL)...)
	if !bytes.Equal(got, want) {
		f.t.Fatalf("run %s (%s): the view differs from the answer built from the record:\nview:   %s\nrecord: %s", id, rec.Status, got, want)
	}
}

// TestViewEveryState walks runs of each type through every status, with
// files of every kind, failure reasons, errors and output, and checks at
// every write that the stored view equals the answer built from the record.
func TestViewEveryState(t *testing.T) {
	f := newFixture(t)
	scrolls, steps := 3, 7
	file := func(id, name string, typ client.ArtifactType) store.RunFile {
		return store.RunFile{ID: id, Type: typ, Name: name, Size: 10, SHA256: "ab", CreatedAt: f.now()}
	}
	terminal := []client.RunStatus{client.RunStatusCompleted, client.RunStatusFailed,
		client.RunStatusTerminated, client.RunStatusTimedOut, client.RunStatusCanceled}
	for _, typ := range []client.RunType{client.RunTypeTaskV1, client.RunTypeTaskV2, client.RunTypeWorkflowRun} {
		for _, end := range terminal {
			rec := f.newRun(typ, func(r *store.RunRecord) {
				if typ != client.RunTypeWorkflowRun {
					r.Task = &client.TaskRunRequest{Prompt: "p", MaxScreenshotScrolls: &scrolls, BrowserSessionID: "pbs_1"}
				}
				r.WebhookURL = "http://127.0.0.1:1/hook"
			})
			f.checkView(rec.ID)
			moves := []func(*store.RunRecord){
				func(r *store.RunRecord) { r.Status = client.RunStatusQueued },
				func(r *store.RunRecord) { r.Status = client.RunStatusRunning },
				func(r *store.RunRecord) {
					r.Files = append(r.Files, file("a_1", "step-1.jpg", client.ArtifactScreenshotAction))
					r.StepCount = &steps
				},
				func(r *store.RunRecord) {
					r.Status = end
					r.Output = json.RawMessage(`{"price":"<12 €>","items":[1,2.5,null]}`)
					r.Errors = []json.RawMessage{json.RawMessage(`{"error_code":"x","reasoning":"a & b"}`)}
					if end != client.RunStatusCompleted {
						r.FailureReason = "The page said \"no\" <twice>\n"
					}
					r.Files = append(r.Files,
						file("a_2", "run.webm", client.ArtifactRecording),
						file("a_3", "report (1).csv", client.ArtifactDownload),
						file("a_4", "final.jpg", client.ArtifactScreenshotFinal),
						file("a_5", "prompt.txt", client.ArtifactLLMPrompt))
				},
				func(r *store.RunRecord) {
					r.Webhook = &store.WebhookDelivery{URL: r.WebhookURL, At: f.now(), StatusCode: 200}
				},
			}
			for _, move := range moves {
				f.updateRun(rec.ID, move)
				f.checkView(rec.ID)
			}
		}
	}
}

// TestAppendJSONLinks: Links.AppendJSON fills the stored view in with the
// URLs the Links make, the same bytes as the answer Links.Run builds.
func TestAppendJSONLinks(t *testing.T) {
	f := newFixture(t)
	signer, err := artifacts.NewSigner(bytes.Repeat([]byte{5}, artifacts.MinSecretLen))
	if err != nil {
		t.Fatal(err)
	}
	links := &Links{Signer: signer, Now: func() time.Time { return time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC) }}
	rec := f.newRun(client.RunTypeWorkflowRun, func(r *store.RunRecord) {
		r.Files = []store.RunFile{{ID: "a_1", Type: client.ArtifactScreenshot, Name: "s.png", CreatedAt: f.now()},
			{ID: "a_2", Type: client.ArtifactDownload, Name: "d.csv", CreatedAt: f.now()}}
	})
	const base = "http://127.0.0.1:8780"
	got, err := links.AppendJSON(ctx, f.st.Runs(), []byte("x"), base, f.org, rec.ID)
	want, _ := jsonenc.Marshal(links.Run(f.get(rec.ID), base))
	if err != nil || !bytes.Equal(got, append([]byte("x"), want...)) {
		t.Fatalf("%v\n got %s\nwant x%s", err, got, want)
	}
}

// TestViewWithoutFileURLs: a view without files fills in without a
// signer; one with files refuses, and the caller builds the answer.
func TestViewWithoutFileURLs(t *testing.T) {
	f := newFixture(t)
	bare := f.newRun(client.RunTypeTaskV1, nil)
	var unsigned *Links
	got, err := unsigned.AppendJSON(ctx, f.st.Runs(), nil, "http://127.0.0.1:8780", f.org, bare.ID)
	if want := wantAnswer(t, f.get(bare.ID), AppURL("http://127.0.0.1:8780", bare.ID), nil); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("no files, no signer: %v\n%s", err, got)
	}
	f.updateRun(bare.ID, func(r *store.RunRecord) {
		r.Files = []store.RunFile{{ID: "a_1", Type: client.ArtifactScreenshot, Name: "s.png", CreatedAt: f.now()}}
	})
	for _, l := range []*Links{nil, {}} {
		if got, err := l.AppendJSON(ctx, f.st.Runs(), []byte("x"), "http://h", f.org, bare.ID); !errors.Is(err, ErrNoView) || !errors.Is(err, errNoFileURLs) || string(got) != "x" {
			t.Fatalf("files without a signer: %q, %v", got, err)
		}
	}
}

// TestViewAddresses: the holes take any address, escaped as the encoder
// escapes it.
func TestViewAddresses(t *testing.T) {
	f := newFixture(t)
	rec := f.newRun(client.RunTypeWorkflowRun, func(r *store.RunRecord) {
		r.Files = []store.RunFile{{ID: "a_1", Type: client.ArtifactDownload, Name: "a.csv", CreatedAt: f.now()}}
	})
	view := f.storedView(rec.ID)
	rec = f.get(rec.ID)
	for _, base := range []string{"http://[::1]:8780", "https://abctl.example:443", `http://odd"host\<é>` + "\x01"} {
		fileURL := func(f store.RunFile) string { return base + "/artifacts/" + f.Name }
		got, err := view.AppendJSON(nil, base+"/v1/runs/"+rec.ID, fileURL)
		if want := wantAnswer(t, rec, base+"/v1/runs/"+rec.ID, fileURL); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("base %q: %v\n got %s\nwant %s", base, err, got, want)
		}
	}
}

// TestViewPlaceholderInOutput: a run whose output contains this process's
// placeholder text cannot have a view; AppendJSON then answers ErrNoView
// and the answer is built from the record.
func TestViewPlaceholderInOutput(t *testing.T) {
	f := newFixture(t)
	rec := f.newRun(client.RunTypeTaskV1, nil)
	f.checkView(rec.ID)
	trap, _ := json.Marshal(map[string]string{"x": holeMarker()[1:] + "0"})
	f.updateRun(rec.ID, func(r *store.RunRecord) { r.Output = trap })
	if view := f.storedView(rec.ID); view != nil {
		t.Fatalf("view of a run whose output holds a placeholder: %q", view)
	}
	var l *Links
	if got, err := l.AppendJSON(ctx, f.st.Runs(), []byte("x"), "http://h", f.org, rec.ID); !errors.Is(err, ErrNoView) || !errors.Is(err, store.ErrNoRunView) || string(got) != "x" {
		t.Fatalf("AppendJSON without a view: %q, %v", got, err)
	}
	if got := f.get(rec.ID); !bytes.Equal(got.Output, trap) {
		t.Fatalf("output %s", got.Output)
	}
}

func TestViewNotFound(t *testing.T) {
	f := newFixture(t)
	rec := f.newRun(client.RunTypeTaskV1, nil)
	other, _, err := f.st.CreateOrganization(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	var l *Links
	for _, c := range []struct{ org, id string }{
		{f.org, "tsk_1"}, {f.org, ""}, {f.org, "tsk\x00"}, {other.ID, rec.ID}, {"o_missing", rec.ID},
	} {
		if got, err := l.AppendJSON(ctx, f.st.Runs(), []byte("x"), "http://h", c.org, c.id); !errors.Is(err, store.ErrNotFound) || errors.Is(err, ErrNoView) || string(got) != "x" {
			t.Errorf("AppendJSON(%q, %q): %q, %v, want ErrNotFound", c.org, c.id, got, err)
		}
	}
}

// TestViewFormatCoversTheEncoding: the format changes when the answer of
// any sample changes, which is how a change of the encoding is noticed.
func TestViewFormatCoversTheEncoding(t *testing.T) {
	samples := viewSamples()
	if len(samples) < 3 {
		t.Fatalf("%d samples", len(samples))
	}
	full := samples[0]
	// Every field of the answer that the record fills is set in a sample.
	var run map[string]json.RawMessage
	b, _ := jsonenc.Marshal(Response(full, "app", testFileURL))
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatal(err)
	}
	for k, v := range run {
		if string(v) == "null" && k != "script_run" && k != "run_with" {
			t.Errorf("sample leaves %s null", k)
		}
	}
	if len(full.Files) == 0 || full.Task == nil || full.FailureReason == "" {
		t.Fatal("the full sample lacks files, a task or a failure reason")
	}
	if f1, err := (Views{}).Format(); err != nil || len(f1) != 32 {
		t.Fatalf("format %x, %v", f1, err)
	}
}

// damagedViews makes views cut short, as a damaged file would hold them,
// under a format of their own.
type damagedViews struct{}

func (damagedViews) Format() ([]byte, error) { return []byte("damaged"), nil }

func (damagedViews) Encode(rec *store.RunRecord) ([]byte, error) {
	v, err := Encode(rec)
	if err != nil {
		return nil, err
	}
	return v[:4], nil
}

func TestViewCorrupt(t *testing.T) {
	f := newFixture(t)
	rec := f.newRun(client.RunTypeTaskV1, func(r *store.RunRecord) {
		r.Files = []store.RunFile{{ID: "a_1", Type: client.ArtifactRecording, Name: "r.webm", CreatedAt: f.now()}}
	})
	good := f.storedView(rec.ID)
	cases := map[string]View{
		"empty":           nil,
		"other version":   append(View{9}, good[1:]...),
		"truncated":       good[:4],
		"offset too far":  {viewVersion, 1, 50, holeApp, '{', '}'},
		"offsets go back": {viewVersion, 2, 1, holeApp, 0, holeApp, '{', '}'},
		"unknown kind":    {viewVersion, 1, 0, 7, '{', '}'},
		"huge count":      {viewVersion, 0xff, 0xff, 0xff, 0xff, 0x0f},
	}
	for name, v := range cases {
		if got, err := v.AppendJSON([]byte("x"), testAppURL, testFileURL); !errors.Is(err, ErrCorrupt) || string(got) != "x" {
			t.Errorf("%s: %q, %v", name, got, err)
		}
	}
	// A damaged view in the file: the caller is told to build the answer
	// from the record. The store opened with Views again (another format)
	// makes the views again.
	f.open(damagedViews{})
	signer, _ := artifacts.NewSigner(bytes.Repeat([]byte{5}, artifacts.MinSecretLen))
	links := &Links{Signer: signer}
	if got, err := links.AppendJSON(ctx, f.st.Runs(), []byte("x"), "http://h", f.org, rec.ID); !errors.Is(err, ErrNoView) || !errors.Is(err, ErrCorrupt) || string(got) != "x" {
		t.Fatalf("damaged view: %q, %v", got, err)
	}
	f.open(Views{})
	f.checkView(rec.ID)
}

// FuzzViewAppend: no stored bytes make AppendJSON panic; what it appends
// on success starts with what it was given.
func FuzzViewAppend(f *testing.F) {
	rec := viewSamples()[0]
	view, err := Encode(rec)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(view))
	f.Add([]byte{viewVersion, 1, 0, holeFile, 1, 'a', 1, 'b', '{', '}'})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := View(b).AppendJSON([]byte("x"), testAppURL, testFileURL)
		if !strings.HasPrefix(string(got), "x") || (err != nil && string(got) != "x") {
			t.Fatalf("%q, %v", got, err)
		}
	})
}

// FuzzViewMatchesAnswer: whatever a run's output, failure reason and file
// names hold, its view filled in is its answer.
func FuzzViewMatchesAnswer(f *testing.F) {
	f.Add(`{"a":"b"}`, "reason", "s.png", "r.webm")
	f.Add(`"abctl-url-hole-0"`, `"abctl-url-hole-`, `a"b`, "\u2028<&>")
	f.Add(`[1,2,{"x":null}]`, "", "", "")
	f.Fuzz(func(t *testing.T, output, reason, shot, recording string) {
		rec := *viewSamples()[0]
		if json.Valid([]byte(output)) {
			rec.Output = json.RawMessage(output)
		}
		rec.FailureReason = reason
		rec.Files = append([]store.RunFile(nil), rec.Files...)
		rec.Files[0].Name, rec.Files[1].Name = shot, recording
		view, err := Encode(&rec)
		if err != nil {
			t.Fatal(err)
		}
		got, err := view.AppendJSON(nil, testAppURL, testFileURL)
		if want := wantAnswer(t, &rec, testAppURL, testFileURL); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%v\n got %s\nwant %s", err, got, want)
		}
	})
}
