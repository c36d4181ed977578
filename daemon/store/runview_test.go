package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
)

// testFileURL stands for the daemon's signed URLs: any function of the
// file will do, as long as both answers use the same one.
func testFileURL(f RunFile) string {
	return "http://127.0.0.1:8780/artifacts/x/" + f.Name + "?kind=" + string(f.Type) + "&sig=1"
}

const testAppURL = "http://127.0.0.1:8780/v1/runs/x"

// wantAnswer is the answer built from the record, as the daemon's slow
// path builds it.
func wantAnswer(t *testing.T, rec *RunRecord, app string, fileURL func(RunFile) string) []byte {
	t.Helper()
	b, err := EncodeResponse(rec.Response(app, fileURL))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// storedView returns the view stored for a run, nil when it has none.
func (f *fixture) storedView(orgID, id string) RunView {
	f.t.Helper()
	var view RunView
	err := f.db.View(func(tx *bolt.Tx) error {
		o, err := openOrg(tx, orgID)
		if err != nil {
			return err
		}
		if v := o.runViews().Get([]byte(id)); v != nil {
			view = append(RunView(nil), v...)
		}
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return view
}

// checkView asserts that the stored answer of the run, filled in, is byte
// for byte the answer built from its stored record.
func (f *fixture) checkView(orgID, id string) {
	f.t.Helper()
	rec, err := f.GetRun(ctx, orgID, id)
	if err != nil {
		f.t.Fatal(err)
	}
	got, err := f.AppendRunJSON(ctx, []byte("prefix:"), orgID, id, testAppURL, testFileURL)
	if err != nil {
		f.t.Fatalf("AppendRunJSON(%s): %v", id, err)
	}
	want := append([]byte("prefix:"), wantAnswer(f.t, rec, testAppURL, testFileURL)...)
	if !bytes.Equal(got, want) {
		f.t.Fatalf("run %s (%s): the view differs from the answer built from the record:\nview:   %s\nrecord: %s", id, rec.Status, got, want)
	}
}

func (f *fixture) now() client.Time { return client.NewTime(f.clock.Now()) }

// closeAndOpen closes the store and opens the same file again, without
// the invariant checks of reopen (for tests that damage the file).
func (f *fixture) closeAndOpen() {
	f.t.Helper()
	if err := f.Close(); err != nil {
		f.t.Fatal(err)
	}
	s, err := Open(f.path, Options{Now: f.clock.Now, IDs: ids.NewWithClock(44, f.clock.Now)})
	if err != nil {
		f.t.Fatal(err)
	}
	f.Store = s
}

func (f *fixture) newRun(typ client.RunType, mod func(*RunRecord)) *RunRecord {
	f.t.Helper()
	rec := &RunRecord{ID: f.NewRunID(typ), OrgID: f.org.ID, Type: typ, Status: client.RunStatusCreated,
		RunRequest: json.RawMessage(`{"prompt":"Find <the> price & \u00e9 \"quoted\""}`)}
	if mod != nil {
		mod(rec)
	}
	if err := f.CreateRun(ctx, rec); err != nil {
		f.t.Fatal(err)
	}
	return rec
}

func (f *fixture) updateRun(id string, change func(*RunRecord)) {
	f.t.Helper()
	if _, err := f.UpdateRun(ctx, f.org.ID, id, func(r *RunRecord) error { change(r); return nil }); err != nil {
		f.t.Fatal(err)
	}
}

// TestRunViewEveryState walks runs of each type through every status, with
// files of every kind, failure reasons, errors and output, and checks at
// every write that the stored view equals the answer built from the record.
func TestRunViewEveryState(t *testing.T) {
	f := newFixture(t)
	scrolls, steps := 3, 7
	file := func(id, name string, typ client.ArtifactType) RunFile {
		return RunFile{ID: id, Type: typ, Name: name, Size: 10, SHA256: "ab", CreatedAt: f.now()}
	}
	terminal := []client.RunStatus{client.RunStatusCompleted, client.RunStatusFailed,
		client.RunStatusTerminated, client.RunStatusTimedOut, client.RunStatusCanceled}
	for _, typ := range []client.RunType{client.RunTypeTaskV1, client.RunTypeTaskV2, client.RunTypeWorkflowRun} {
		for _, end := range terminal {
			rec := f.newRun(typ, func(r *RunRecord) {
				if typ != client.RunTypeWorkflowRun {
					r.Task = &client.TaskRunRequest{Prompt: "p", MaxScreenshotScrolls: &scrolls, BrowserSessionID: "pbs_1"}
				}
				r.WebhookURL = "http://127.0.0.1:1/hook"
			})
			f.checkView(f.org.ID, rec.ID)
			moves := []func(*RunRecord){
				func(r *RunRecord) { r.Status = client.RunStatusQueued },
				func(r *RunRecord) { r.Status = client.RunStatusRunning },
				func(r *RunRecord) {
					r.Files = append(r.Files, file("a_1", "step-1.jpg", client.ArtifactScreenshotAction))
					r.StepCount = &steps
				},
				func(r *RunRecord) {
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
				func(r *RunRecord) {
					r.Webhook = &WebhookDelivery{URL: r.WebhookURL, At: f.now(), StatusCode: 200}
				},
			}
			for _, move := range moves {
				f.updateRun(rec.ID, move)
				f.checkView(f.org.ID, rec.ID)
			}
		}
	}
}

// TestRunViewWithoutFileURLs: a view without files fills in without a
// signer; one with files refuses, and the caller builds the answer.
func TestRunViewWithoutFileURLs(t *testing.T) {
	f := newFixture(t)
	bare := f.newRun(client.RunTypeTaskV1, nil)
	got, err := f.AppendRunJSON(ctx, nil, f.org.ID, bare.ID, testAppURL, nil)
	rec, _ := f.GetRun(ctx, f.org.ID, bare.ID)
	if err != nil || !bytes.Equal(got, wantAnswer(t, rec, testAppURL, nil)) {
		t.Fatalf("no files, no signer: %v\n%s", err, got)
	}
	f.updateRun(bare.ID, func(r *RunRecord) {
		r.Files = []RunFile{{ID: "a_1", Type: client.ArtifactScreenshot, Name: "s.png", CreatedAt: f.now()}}
	})
	if got, err := f.AppendRunJSON(ctx, []byte("x"), f.org.ID, bare.ID, testAppURL, nil); !errors.Is(err, ErrNoRunView) || !errors.Is(err, errNoFileURLs) || string(got) != "x" {
		t.Fatalf("files without a signer: %q, %v", got, err)
	}
}

// TestRunViewAddresses: the holes take any address, escaped as the encoder
// escapes it.
func TestRunViewAddresses(t *testing.T) {
	f := newFixture(t)
	rec := f.newRun(client.RunTypeWorkflowRun, func(r *RunRecord) {
		r.Files = []RunFile{{ID: "a_1", Type: client.ArtifactDownload, Name: "a.csv", CreatedAt: f.now()}}
	})
	view := f.storedView(f.org.ID, rec.ID)
	rec, _ = f.GetRun(ctx, f.org.ID, rec.ID)
	for _, base := range []string{"http://[::1]:8780", "https://abctl.example:443", `http://odd"host\<é>` + "\x01"} {
		fileURL := func(f RunFile) string { return base + "/artifacts/" + f.Name }
		got, err := view.AppendJSON(nil, base+"/v1/runs/"+rec.ID, fileURL)
		if want := wantAnswer(t, rec, base+"/v1/runs/"+rec.ID, fileURL); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("base %q: %v\n got %s\nwant %s", base, err, got, want)
		}
	}
}

// TestRunViewPlaceholderInOutput: a run whose output contains this
// process's placeholder text cannot have a view; RunView then answers nil
// and the answer is built from the record.
func TestRunViewPlaceholderInOutput(t *testing.T) {
	f := newFixture(t)
	rec := f.newRun(client.RunTypeTaskV1, nil)
	f.checkView(f.org.ID, rec.ID)
	trap, _ := json.Marshal(map[string]string{"x": holeMarker()[1:] + "0"})
	f.updateRun(rec.ID, func(r *RunRecord) { r.Output = trap })
	if view := f.storedView(f.org.ID, rec.ID); view != nil {
		t.Fatalf("view of a run whose output holds a placeholder: %q", view)
	}
	if got, err := f.AppendRunJSON(ctx, []byte("x"), f.org.ID, rec.ID, testAppURL, testFileURL); !errors.Is(err, ErrNoRunView) || string(got) != "x" {
		t.Fatalf("AppendRunJSON without a view: %q, %v", got, err)
	}
	got, _ := f.GetRun(ctx, f.org.ID, rec.ID)
	if !bytes.Equal(got.Output, trap) {
		t.Fatalf("output %s", got.Output)
	}
}

func TestRunViewNotFound(t *testing.T) {
	f := newFixture(t)
	rec := f.newRun(client.RunTypeTaskV1, nil)
	other := f.newOrg("other")
	for _, c := range []struct{ org, id string }{
		{f.org.ID, "tsk_1"}, {f.org.ID, ""}, {f.org.ID, "tsk\x00"}, {other.ID, rec.ID}, {"o_missing", rec.ID},
	} {
		if got, err := f.AppendRunJSON(ctx, []byte("x"), c.org, c.id, testAppURL, testFileURL); !errors.Is(err, ErrNotFound) || string(got) != "x" {
			t.Errorf("AppendRunJSON(%q, %q): %q, %v, want ErrNotFound", c.org, c.id, got, err)
		}
	}
}

// TestRunViewMigration opens a store of schema 3 (runs without views) and
// finds every run's view made, equal to its answer.
func TestRunViewMigration(t *testing.T) {
	f := newFixture(t)
	var runIDs []string
	for i := range 5 {
		rec := f.newRun(client.RunTypeTaskV1, func(r *RunRecord) { r.Title = fmt.Sprint("run ", i) })
		f.updateRun(rec.ID, func(r *RunRecord) {
			r.Status = client.RunStatusCompleted
			r.Files = []RunFile{{ID: "a_1", Type: client.ArtifactScreenshot, Name: "s.png", CreatedAt: f.now()}}
		})
		runIDs = append(runIDs, rec.ID)
	}
	// Back to schema 3: no run_views buckets, no format fingerprint.
	err := f.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketOrgData).Bucket([]byte(f.org.ID)).DeleteBucket(bucketRunViews); err != nil {
			return err
		}
		meta := tx.Bucket(bucketMeta)
		if err := meta.Delete(keyRunViewFormat); err != nil {
			return err
		}
		return meta.Put(keySchemaVersion, u64(3))
	})
	if err != nil {
		t.Fatal(err)
	}
	f.closeAndOpen()
	_ = f.db.View(func(tx *bolt.Tx) error {
		if got := tx.Bucket(bucketMeta).Get(keySchemaVersion); !bytes.Equal(got, u64(SchemaVersion())) {
			t.Errorf("schema %x after reopening, want %d", got, SchemaVersion())
		}
		return nil
	})
	for _, id := range runIDs {
		f.checkView(f.org.ID, id)
	}
}

// TestRunViewFormatChange: views made differently from how this binary
// makes them (here: damaged, under another fingerprint) are made again
// when the store opens; under the current fingerprint they are left alone.
func TestRunViewFormatChange(t *testing.T) {
	f := newFixture(t)
	rec := f.newRun(client.RunTypeWorkflowRun, nil)
	damage := func(fingerprint []byte) {
		err := f.db.Update(func(tx *bolt.Tx) error {
			o, _ := openOrg(tx, f.org.ID)
			if err := o.runViews().Put([]byte(rec.ID), []byte{runViewVersion, 0, '{', '}'}); err != nil {
				return err
			}
			return tx.Bucket(bucketMeta).Put(keyRunViewFormat, fingerprint)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	current, err := runViewFormat()
	if err != nil {
		t.Fatal(err)
	}
	damage(current)
	f.closeAndOpen()
	if view := f.storedView(f.org.ID, rec.ID); string(view) != "\x01\x00{}" {
		t.Fatalf("a view under the current fingerprint was re-made: %q", view)
	}
	damage([]byte("an older format"))
	f.closeAndOpen()
	f.checkView(f.org.ID, rec.ID)
}

// TestRunViewFormatCoversTheEncoding: the fingerprint changes when the
// answer of any sample changes, which is how a change of the encoding is
// noticed.
func TestRunViewFormatCoversTheEncoding(t *testing.T) {
	samples := viewSamples()
	if len(samples) < 3 {
		t.Fatalf("%d samples", len(samples))
	}
	full := samples[0]
	// Every field of the answer that the record fills is set in a sample.
	var run map[string]json.RawMessage
	b, _ := EncodeResponse(full.Response("app", testFileURL))
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
}

func TestRunViewCorrupt(t *testing.T) {
	f := newFixture(t)
	rec := f.newRun(client.RunTypeTaskV1, func(r *RunRecord) {
		r.Files = []RunFile{{ID: "a_1", Type: client.ArtifactRecording, Name: "r.webm", CreatedAt: f.now()}}
	})
	good := f.storedView(f.org.ID, rec.ID)
	cases := map[string]RunView{
		"empty":           nil,
		"other version":   append(RunView{9}, good[1:]...),
		"truncated":       good[:4],
		"offset too far":  {runViewVersion, 1, 50, holeApp, '{', '}'},
		"offsets go back": {runViewVersion, 2, 1, holeApp, 0, holeApp, '{', '}'},
		"unknown kind":    {runViewVersion, 1, 0, 7, '{', '}'},
		"huge count":      {runViewVersion, 0xff, 0xff, 0xff, 0xff, 0x0f},
	}
	for name, v := range cases {
		if got, err := v.AppendJSON([]byte("x"), testAppURL, testFileURL); !errors.Is(err, ErrCorruptView) || string(got) != "x" {
			t.Errorf("%s: %q, %v", name, got, err)
		}
	}
	// A damaged view in the file: the caller is told to build the answer
	// from the record; the next write of the run makes the view again.
	err := f.db.Update(func(tx *bolt.Tx) error {
		o, _ := openOrg(tx, f.org.ID)
		return o.runViews().Put([]byte(rec.ID), good[:4])
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := f.AppendRunJSON(ctx, []byte("x"), f.org.ID, rec.ID, testAppURL, testFileURL); !errors.Is(err, ErrNoRunView) || !errors.Is(err, ErrCorruptView) || string(got) != "x" {
		t.Fatalf("damaged view: %q, %v", got, err)
	}
	f.updateRun(rec.ID, func(r *RunRecord) { r.Status = client.RunStatusRunning })
	f.checkView(f.org.ID, rec.ID)
}

// FuzzRunViewAppend: no stored bytes make AppendJSON panic; what it
// appends on success starts with what it was given.
func FuzzRunViewAppend(f *testing.F) {
	rec := viewSamples()[0]
	view, err := encodeRunView(rec)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(view))
	f.Add([]byte{runViewVersion, 1, 0, holeFile, 1, 'a', 1, 'b', '{', '}'})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := RunView(b).AppendJSON([]byte("x"), testAppURL, testFileURL)
		if !strings.HasPrefix(string(got), "x") || (err != nil && string(got) != "x") {
			t.Fatalf("%q, %v", got, err)
		}
	})
}

// FuzzRunViewMatchesAnswer: whatever a run's output, failure reason and
// file names hold, its view filled in is its answer.
func FuzzRunViewMatchesAnswer(f *testing.F) {
	f.Add(`{"a":"b"}`, "reason", "s.png", "r.webm")
	f.Add(`"abctl-url-hole-0"`, `"abctl-url-hole-`, `a"b`, "\u2028<&>")
	f.Add(`[1,2,{"x":null}]`, "", "", "")
	f.Fuzz(func(t *testing.T, output, reason, shot, recording string) {
		rec := *viewSamples()[0]
		if json.Valid([]byte(output)) {
			rec.Output = json.RawMessage(output)
		}
		rec.FailureReason = reason
		rec.Files = append([]RunFile(nil), rec.Files...)
		rec.Files[0].Name, rec.Files[1].Name = shot, recording
		view, err := encodeRunView(&rec)
		if err != nil {
			t.Fatal(err)
		}
		got, err := view.AppendJSON(nil, testAppURL, testFileURL)
		if want := wantAnswer(t, &rec, testAppURL, testFileURL); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%v\n got %s\nwant %s", err, got, want)
		}
	})
}
