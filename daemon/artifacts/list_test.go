package artifacts

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

func TestListItems(t *testing.T) {
	e := newEnv(t)
	exp := e.clock.in(DefaultLifetime)
	shot, shotBody := e.record(t, testOrg, testRun, "shot.png", client.ArtifactScreenshot, nil)
	e.clock.add(time.Second)
	dl, dlBody := e.record(t, testOrg, testRun, "Report 1.pdf", client.ArtifactDownload, nil)

	items := ListItems(e.base, e.signer, testOrg, testRun, []store.RunFile{shot, dl}, exp)
	if len(items) != 2 {
		t.Fatalf("%d items", len(items))
	}
	a := items[0]
	if a.ArtifactID != shot.ID || a.ArtifactType != client.ArtifactScreenshot ||
		a.URI != "abctl://artifacts/"+testRun+"/shot.png" ||
		*a.Checksum != shot.SHA256 || *a.FileSize != shot.Size ||
		*a.RunID != testRun || *a.WorkflowRunID != testRun || a.TaskID != nil ||
		a.OrganizationID != testOrg || !a.CreatedAt.Equal(shot.CreatedAt.Time) || !a.ModifiedAt.Equal(shot.CreatedAt.Time) ||
		a.BundleKey != nil || a.StepID != nil || a.Archived {
		t.Fatalf("item %+v", a)
	}
	if *a.SignedURL != e.signer.URL(e.base, testOrg, testRun, "shot.png", exp) {
		t.Fatalf("signed_url %s", *a.SignedURL)
	}
	b := items[1]
	if b.URI != "abctl://artifacts/"+testRun+"/Report%201.pdf" || !strings.Contains(*b.SignedURL, "&download=1&") {
		t.Fatalf("download item %s %s", b.URI, *b.SignedURL)
	}
	// The signed URLs work, with the right disposition.
	for i, want := range [][]byte{shotBody, dlBody} {
		r := e.get(t, *items[i].SignedURL)
		if r.status != 200 || !bytes.Equal(r.body, want) {
			t.Fatalf("item %d: status %d", i, r.status)
		}
	}
	if r := e.get(t, *b.SignedURL); !strings.HasPrefix(r.header.Get("Content-Disposition"), "attachment;") {
		t.Errorf("download disposition %q", r.header.Get("Content-Disposition"))
	}

	// The JSON carries every field of the wire type.
	js, _ := json.Marshal(items[0])
	var m map[string]any
	json.Unmarshal(js, &m)
	for _, k := range []string{"artifact_id", "artifact_type", "uri", "bundle_key", "checksum", "file_size", "task_id",
		"step_id", "workflow_run_id", "workflow_run_block_id", "run_id", "browser_session_id", "observer_cruise_id",
		"observer_thought_id", "ai_suggestion_id", "signed_url", "archived", "organization_id", "created_at", "modified_at"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %s", k)
		}
	}

	// Run id prefixes.
	for run, want := range map[string][2]bool{ // task_id, workflow_run_id
		"tsk_1":    {true, false},
		"tsk_v2_1": {true, false},
		"wr_1":     {false, true},
		"pbs_1":    {false, false},
	} {
		it := ListItems(e.base, e.signer, testOrg, run, []store.RunFile{shot}, exp)[0]
		if (it.TaskID != nil) != want[0] || (it.WorkflowRunID != nil) != want[1] || *it.RunID != run {
			t.Errorf("%s: task_id %v workflow_run_id %v", run, it.TaskID, it.WorkflowRunID)
		}
		if it.TaskID != nil && *it.TaskID != run || it.WorkflowRunID != nil && *it.WorkflowRunID != run {
			t.Errorf("%s: wrong id", run)
		}
	}

	// No files: [] not null.
	js, _ = json.Marshal(ListItems(e.base, e.signer, testOrg, testRun, nil, exp))
	if string(js) != "[]" {
		t.Fatalf("empty list %s", js)
	}
	if got := FilterTypes([]store.RunFile{shot, dl}, client.ArtifactDownload); len(got) != 1 || got[0].ID != dl.ID {
		t.Fatalf("FilterTypes %v", got)
	}
	if got := FilterTypes([]store.RunFile{shot, dl}); len(got) != 2 {
		t.Fatalf("FilterTypes without types %v", got)
	}
}

func TestRunFields(t *testing.T) {
	e := newEnv(t)
	exp := e.clock.in(DefaultLifetime)
	var files []store.RunFile
	add := func(name string, typ client.ArtifactType) store.RunFile {
		f, _ := e.record(t, testOrg, testRun, name, typ, nil)
		files = append(files, f)
		e.clock.add(time.Second)
		return f
	}
	add("s1.png", client.ArtifactScreenshotAction)
	dl := add("data.csv", client.ArtifactDownload)
	add("s2.png", client.ArtifactScreenshot)
	add("old.webm", client.ArtifactRecording)
	add("s3.png", client.ArtifactScreenshotFinal)
	add("rec.webm", client.ArtifactRecording)
	add("prompt.txt", client.ArtifactLLMPrompt)
	// Two screenshots recorded at the same time: the later one is newer.
	e.clock.add(-time.Second)
	add("s4.png", client.ArtifactScreenshotLLM)
	e.clock.add(-time.Second)
	add("s5.png", client.ArtifactScreenshot)

	signed := func(f store.RunFile) string { return SignedURL(e.base, e.signer, testOrg, testRun, f, exp) }
	urls := ScreenshotURLs(files, 0, signed)
	var names []string
	for _, u := range urls {
		names = append(names, u[strings.LastIndex(u[:strings.Index(u, "?")], "/")+1:strings.Index(u, "?")])
	}
	if got := strings.Join(names, ","); got != "s5.png,s4.png,s3.png,s2.png,s1.png" {
		t.Fatalf("screenshots %s", got)
	}
	if got := ScreenshotURLs(files, 2, signed); len(got) != 2 || got[0] != urls[0] {
		t.Fatalf("limit: %v", got)
	}
	if got := ScreenshotURLs(files[1:2], 0, signed); got != nil {
		t.Fatalf("no screenshots: %v", got)
	}
	for _, u := range urls {
		if r := e.get(t, u); r.status != 200 || r.header.Get("Content-Type") != "image/png" {
			t.Fatalf("%s: %d", u, r.status)
		}
	}

	rec := RecordingURL(files, signed)
	if rec == nil || *rec != e.signer.URL(e.base, testOrg, testRun, "rec.webm", exp) {
		t.Fatalf("recording %v", rec)
	}
	if RecordingURL(files[:1], signed) != nil {
		t.Fatal("recording without one")
	}

	infos := FileInfos(files, signed)
	if len(infos) != 1 {
		t.Fatalf("%d file infos", len(infos))
	}
	fi := infos[0]
	if fi.URL != e.signer.DownloadURL(e.base, testOrg, testRun, "data.csv", exp) || *fi.Checksum != dl.SHA256 ||
		*fi.Filename != "data.csv" || *fi.FileSize != dl.Size || !fi.ModifiedAt.Equal(dl.CreatedAt.Time) || *fi.ArtifactID != dl.ID {
		t.Fatalf("file info %+v", fi)
	}
	if r := e.get(t, fi.URL); r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Disposition"), "attachment;") {
		t.Fatalf("download: %d %q", r.status, r.header.Get("Content-Disposition"))
	}
	if FileInfos(files[:1], signed) != nil {
		t.Fatal("file infos without downloads")
	}
}
