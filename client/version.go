package client

import "context"

// ServerVersion is the answer of GET /v1/version: the version of the
// server. The hosted service answers its git revision; the abctl daemon,
// the version of abctl it runs ("dev" for a build without one).
type ServerVersion struct {
	Version string `json:"version"`
}

// Version asks the server for its version (GET /v1/version, which needs
// no API key).
func (c *Client) Version(ctx context.Context, opts ...Option) (*ServerVersion, error) {
	out := new(ServerVersion)
	_, err := c.do(ctx, request{method: "GET", path: "/v1/version", idempotent: true}, out, opts)
	return nil2(out, err)
}
