package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// drainingTransport is the SDK's newline-delimited JSON transport over
// stdin and stdout, except that the end of stdin is reported only once
// every request read before it has been answered.
//
// The SDK's connection treats the end of its input as the end of the
// session: from then on it cancels the requests still being handled and
// refuses to write their answers. A client that writes its requests and
// closes its side at once (`printf '...' | abctl mcp`, a script, a test
// harness) would get nothing. JSON-RPC over a pipe allows that, and the
// answers still have a place to go: stdout.
type drainingTransport struct {
	in  io.Reader
	out io.Writer
}

// Connect implements mcp.Transport.
func (t *drainingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	inner, err := (&mcp.IOTransport{Reader: io.NopCloser(t.in), Writer: nopWriteCloser{t.out}}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &drainingConn{Connection: inner, pending: map[jsonrpc.ID]bool{}, closed: make(chan struct{})}, nil
}

// drainingConn keeps the ids of the requests read and not yet answered.
//
// Wrapping the SDK's connection hides an optional method of it that only
// the SDK's own types can implement (told the negotiated protocol version,
// it refuses JSON-RPC batches from 2025-06-18 on): such batches are then
// answered rather than refused.
type drainingConn struct {
	mcp.Connection

	mu      sync.Mutex
	pending map[jsonrpc.ID]bool
	changed chan struct{} // closed and replaced when pending shrinks
	closed  chan struct{}
	once    sync.Once
}

// Read implements mcp.Connection: the next message, or the end of the
// input once nothing read is left unanswered (or the connection was closed,
// or ctx ended).
func (c *drainingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		if errors.Is(err, io.EOF) {
			c.drain(ctx)
		}
		return nil, err
	}
	if req, ok := msg.(*jsonrpc.Request); ok {
		c.mu.Lock()
		switch {
		case req.IsCall():
			c.pending[req.ID] = true
		case req.Method == "notifications/cancelled":
			// A cancelled request may never be answered.
			c.forget(req)
		}
		c.mu.Unlock()
	}
	return msg, nil
}

// forget drops the request a cancellation names; c.mu is held.
func (c *drainingConn) forget(cancel *jsonrpc.Request) {
	var p mcp.CancelledParams
	if err := json.Unmarshal(cancel.Params, &p); err != nil {
		return
	}
	if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
		c.done(id)
	}
}

// done marks id answered; c.mu is held.
func (c *drainingConn) done(id jsonrpc.ID) {
	if !c.pending[id] {
		return
	}
	delete(c.pending, id)
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
}

// Write implements mcp.Connection, noting the requests it answers.
func (c *drainingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		// Answered, or never will be: either way nothing to wait for.
		c.mu.Lock()
		c.done(resp.ID)
		c.mu.Unlock()
	}
	return err
}

// Close implements mcp.Connection; it also ends a wait in Read.
func (c *drainingConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Connection.Close()
}

// drain waits until every request read has been answered, the connection
// is closed, or ctx ends.
func (c *drainingConn) drain(ctx context.Context) {
	for {
		c.mu.Lock()
		if len(c.pending) == 0 {
			c.mu.Unlock()
			return
		}
		if c.changed == nil {
			c.changed = make(chan struct{})
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-c.closed:
			return
		case <-ctx.Done():
			return
		}
	}
}

// nopWriteCloser lets the SDK's transport close stdout without closing it:
// the process, not the session, owns it.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
