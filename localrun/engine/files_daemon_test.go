package engine_test

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

// TestDaemonUploadedFileFeedsFileURLParser: a CSV uploaded through the
// daemon (POST /v1/upload_file) is read by a file_url_parser block of an
// agent run given the answered URL as its file parameter.
func TestDaemonUploadedFileFeedsFileURLParser(t *testing.T) {
	needBrowser(t)
	c, _ := startDaemon(t, newEngine(t, engine.Config{}))
	ctx := t.Context()
	up, err := c.Files.Upload(ctx, "invoices.csv", strings.NewReader("supplier,amount\nNorthwind,120.50\n\"Contoso, Ltd\",80\n"))
	if err != nil {
		t.Fatal(err)
	}
	def := client.WorkflowDefinition{
		Parameters: []client.Parameter{{ParameterType: client.ParameterTypeWorkflow, Key: "invoices", WorkflowParameterType: client.WorkflowParameterFileURL}},
		Blocks:     client.Blocks{&client.FileURLParserBlock{BlockBase: base("lines"), FileURL: "{{ invoices }}", FileType: "csv"}},
	}
	agent, err := c.Agents.Create(ctx, &client.AgentDefinition{Title: "Read the invoices", WorkflowDefinition: def}, nil)
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID, Parameters: map[string]any{"invoices": up.PresignedURL}})
	if err != nil {
		t.Fatal(err)
	}
	done, err := c.Runs.Wait(ctx, run.RunID, &client.WaitOptions{Interval: 100 * time.Millisecond, MaxInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != client.RunStatusCompleted {
		t.Fatalf("%s: %s", done.Status, done.GetFailureReason())
	}
	var out struct {
		Lines []map[string]string `json:"lines_output"`
	}
	if err := done.DecodeOutput(&out); err != nil {
		t.Fatal(err)
	}
	if len(out.Lines) != 2 || out.Lines[0]["supplier"] != "Northwind" || out.Lines[1]["supplier"] != "Contoso, Ltd" || out.Lines[1]["amount"] != "80" {
		t.Errorf("lines_output %v, want the uploaded file's two rows", out.Lines)
	}
}

// TestDaemonDownloadFiles: POST /v1/run/tasks/download_files starts an
// agent run whose model clicks the download link; the run completes with
// the file among its downloaded_files, and the content route gives the
// file's bytes by its artifact id.
func TestDaemonDownloadFiles(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	srv := llmtest.New(t, plan("Click the report link.", clickOn("Download the 2026 report (CSV)")))
	c, _ := startDaemon(t, modelEngine(t, srv, engine.Config{}))
	ctx := t.Context()
	run, err := c.Runs.DownloadFiles(ctx, &client.DownloadFilesRequest{URL: site.URL(testsite.PageDownload), NavigationGoal: "Download the 2026 report"})
	if err != nil {
		t.Fatal(err)
	}
	if run.RunType != client.RunTypeWorkflowRun {
		t.Errorf("run_type %s, want an agent run as the hosted service answers", run.RunType)
	}
	done, err := c.Runs.Wait(ctx, run.RunID, &client.WaitOptions{Interval: 100 * time.Millisecond, MaxInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != client.RunStatusCompleted {
		t.Fatalf("%s: %s", done.Status, done.GetFailureReason())
	}
	if len(done.DownloadedFiles) != 1 || done.DownloadedFiles[0].Filename == nil || *done.DownloadedFiles[0].Filename != testsite.ReportFilename ||
		done.DownloadedFiles[0].ArtifactID == nil {
		t.Fatalf("downloaded_files %+v", done.DownloadedFiles)
	}
	ac, err := c.Files.Content(ctx, *done.DownloadedFiles[0].ArtifactID, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ac.Body.Close()
	if b, _ := io.ReadAll(ac.Body); string(b) != testsite.ReportCSV {
		t.Errorf("the downloaded file's content %q", b)
	}
}
