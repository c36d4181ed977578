package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
)

// RunFrameInput is the input of skyvern_run_frame.
type RunFrameInput struct {
	RunID string `json:"run_id" jsonschema:"id of a running run: tsk_... (task) or wr_... (agent run or single actions)"`
}

// RunFrameResult describes the picture skyvern_run_frame returns as image
// content.
type RunFrameResult struct {
	RunID   string `json:"run_id"`
	TakenAt string `json:"taken_at" jsonschema:"when the page looked as the picture shows (RFC 3339)"`
	Bytes   int    `json:"bytes" jsonschema:"the size of the JPEG"`
}

// frameTools show the page of a running run.
type frameTools struct {
	runs *client.RunsService
}

func (t *frameTools) register(s *mcp.Server) {
	const name, title = "skyvern_run_frame", "See a running run's page"
	schema, err := jsonschema.For[RunFrameInput](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: input schema of %s: %v", name, err))
	}
	nonEmpty(schema.Properties, "run_id")
	annotations := readOnly()
	annotations.Title = title
	mcp.AddTool(s, &mcp.Tool{
		Name: name, Title: title, Annotations: annotations, InputSchema: schema,
		Description: "Look at the page the browser of a running run shows now: a JPEG picture of its viewport, at most about a second old, " +
			"as image content. A run that is over has no picture (skyvern_workflow_status gives its screenshots and recording), " +
			"nor has one that has not opened its browser yet: the error says which." + ownTool,
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in RunFrameInput) (*mcp.CallToolResult, *RunFrameResult, error) {
		f, err := t.runs.Frame(ctx, in.RunID)
		if err != nil {
			return nil, nil, describeError(err)
		}
		out := &RunFrameResult{RunID: in.RunID, TakenAt: f.Taken.UTC().Format(time.RFC3339Nano), Bytes: len(f.JPEG)}
		// The text is the result's JSON, as every tool's, for clients that
		// read only text; the picture follows it.
		meta, err := json.Marshal(out)
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: string(meta)},
			&mcp.ImageContent{Data: f.JPEG, MIMEType: "image/jpeg"},
		}}, out, nil
	})
}
