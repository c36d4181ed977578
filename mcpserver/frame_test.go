package mcpserver_test

import (
	"bytes"
	"image/jpeg"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/mcpserver"
)

// TestRunFrame: the page of a run_action run open in a real Chromium comes
// back as a JPEG of the viewport; a run that is over has none, and says
// so.
func TestRunFrame(t *testing.T) {
	faces(t, true, func(t *testing.T, e *env, s *mcp.ClientSession) {
		act := call[mcpserver.RunActionResult](t, s, "skyvern_run_action", map[string]any{
			"url": e.site.srv.URL + "/", "selector": "#go", "intention": "the Next link",
		})
		res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: "skyvern_run_frame", Arguments: map[string]any{"run_id": act.WorkflowRunID}})
		if err != nil || res.IsError {
			t.Fatalf("skyvern_run_frame: %v %s", err, text(res))
		}
		got := call[mcpserver.RunFrameResult](t, s, "skyvern_run_frame", map[string]any{"run_id": act.WorkflowRunID})
		if got.RunID != act.WorkflowRunID || got.TakenAt == "" || got.Bytes == 0 {
			t.Errorf("the frame's description: %+v", got)
		}
		var img *mcp.ImageContent
		for _, c := range res.Content {
			if ic, ok := c.(*mcp.ImageContent); ok {
				img = ic
			}
		}
		if img == nil || img.MIMEType != "image/jpeg" {
			t.Fatalf("no JPEG image content in %+v", res.Content)
		}
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(img.Data))
		if err != nil || cfg.Width != 1280 || cfg.Height != 720 {
			t.Fatalf("the picture: %+v %v, want a 1280x720 JPEG (the viewport)", cfg, err)
		}

		done, err := e.c.Runs.StartTask(t.Context(), &client.TaskRunRequest{Prompt: "script: steps=1"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.c.Runs.Wait(t.Context(), done.RunID, &client.WaitOptions{Interval: 20 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		if msg := callError(t, s, "skyvern_run_frame", map[string]any{"run_id": done.RunID}); !strings.Contains(msg, "409") || !strings.Contains(msg, "is over") {
			t.Errorf("a finished run: %s", msg)
		}
	})
}
