package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
)

// The web UI tool gives an assistant a link to hand its user, who wants
// to look at runs in a browser: a one-time sign-in link to the daemon's
// web UI (POST /ui/sign-in-links, as `abctl open` asks for).

// WebUILinkInput is the input of skyvern_web_ui_link.
type WebUILinkInput struct {
	ID string `json:"id,omitempty" jsonschema:"a run id (tsk_..., wr_...) or agent id (wpid_...) whose page the link opens; empty: the runs list"`
}

// WebUILinkResult is the answer of skyvern_web_ui_link.
type WebUILinkResult struct {
	URL       string `json:"url" jsonschema:"the link for the user to open in a browser: it signs in once, before expires_at"`
	ExpiresAt string `json:"expires_at" jsonschema:"when the link stops working, in UTC (two minutes after it was made)"`
}

// webUITools give links to the daemon's web UI.
type webUITools struct {
	// link asks for one: client.Client.SignInLink.
	link func(ctx context.Context, next string, opts ...client.Option) (*client.SignInLink, error)
}

func (t *webUITools) register(s *mcp.Server) {
	addTool(s, spec{
		name:  "skyvern_web_ui_link",
		title: "Web UI link",
		description: "A one-time link that signs the user's browser in to the daemon's web UI, on the runs list or on the page " +
			"of a run or agent: give it to the user to open, as it is, right away. It works once, within two minutes; it is " +
			"as good as the API key until then, so show it only to the user." + ownTool,
		annotations: writes(false),
	}, t.webUILink)
}

func (t *webUITools) webUILink(ctx context.Context, in WebUILinkInput) (*WebUILinkResult, error) {
	id := strings.TrimSpace(in.ID)
	next := "/ui/runs"
	switch {
	case id == "":
	case strings.HasPrefix(id, "tsk_") || strings.HasPrefix(id, "wr_"):
		next = "/ui/runs/" + id
	case strings.HasPrefix(id, "wpid_"):
		next = "/ui/agents/" + id
	default:
		return nil, fmt.Errorf("%q is neither a run id (tsk_..., wr_...) nor an agent id (wpid_...); leave id empty for the runs list", id)
	}
	if strings.ContainsAny(id, "/?#%\\ ") {
		return nil, fmt.Errorf("%q is not an id: ids have no slashes, spaces or URL characters", id)
	}
	l, err := t.link(ctx, next)
	if err != nil {
		return nil, err
	}
	return &WebUILinkResult{URL: l.URL, ExpiresAt: l.ExpiresAt.UTC().Format(time.RFC3339)}, nil
}
