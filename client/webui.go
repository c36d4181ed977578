package client

import (
	"context"
	"net/url"
)

// SignInLink is a one-time link that signs a browser in to an abctl
// daemon's web UI as the organization whose key asked for it.
type SignInLink struct {
	// URL opens the web UI's sign-in page; its token is in the URL's
	// fragment. It works once, and only until ExpiresAt.
	URL       string `json:"url"`
	ExpiresAt Time   `json:"expires_at"`
}

// SignInLink asks an abctl daemon for a one-time link to its web UI
// (POST /ui/sign-in-links), signed in as the client's organization, that
// opens the page next once signed in: a path under /ui/ such as "/ui/runs"
// or "/ui/runs/wr_123". An empty or unknown next opens the runs list.
//
// This is abctl's own, not an operation of the hosted service's v1 API:
// the hosted service answers 404. The link is valid for two minutes and
// for one sign-in; hand it to a person (it is as good as the key until
// then) and do not log it.
func (c *Client) SignInLink(ctx context.Context, next string, opts ...Option) (*SignInLink, error) {
	var q url.Values
	if next != "" {
		q = url.Values{"next": {next}}
	}
	out := new(SignInLink)
	_, err := c.do(ctx, request{method: "POST", path: "/ui/sign-in-links", query: q}, out, opts)
	return nil2(out, err)
}
