package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"runtime/debug"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
)

// ServerName is the implementation name the server reports to MCP clients.
const ServerName = "abctl"

// Options configures New. The zero value is ready to use.
type Options struct {
	// Version is reported to MCP clients; "" means client.Version.
	Version string
	// Logger receives the MCP server's own records (sessions starting and
	// ending, protocol errors); nil discards them. In stdio mode it must
	// not write to stdout, which carries only protocol messages.
	Logger *slog.Logger
	// Poll is how the waiting tools poll a run; nil means the client's
	// defaults (1 s, growing to 10 s while nothing changes).
	Poll *client.WaitOptions
}

// instructions tells a model what the tools are about before it reads them.
const instructions = `Tools for a browser-automation agent service (Skyvern-compatible v1 API).
A task run (skyvern_run_task) is a one-off goal in plain language, optionally starting at a URL.
An agent (also called a workflow, id wpid_...) is a saved, versioned definition of parameters and
blocks; create it with skyvern_workflow_create from YAML or JSON text and start it with
skyvern_workflow_run and its parameters. Runs have ids tsk_... (tasks) or wr_... (agent runs); follow
them with skyvern_workflow_status until the status is completed, failed, terminated, timed_out or
canceled, then read their output. A browser session (skyvern_browser_session_create) keeps a browser
open between runs: sign in once with skyvern_login, then run agents in it signed in.
A script (s_...) is an agent's run recorded block by block; runs with run_with "code" replay it
without the model: skyvern_script_get shows which blocks replay, skyvern_script_deploy takes it edited.
Errors carry the service's own explanation (detail).`

// New returns an MCP server whose tools call the v1 API through c. The
// server is not yet connected to anything: run it over a transport
// (ServeStdio, mcp.NewStreamableHTTPHandler, server.Run).
//
// c is used as given for every call; it should have no per-call state.
// Runs the tools start carry the x-user-agent "skyvern-mcp", which the
// hosted service records as the MCP trigger.
func New(c *client.Client, opts Options) *mcp.Server {
	version := opts.Version
	if version == "" {
		version = client.Version
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: ServerName, Title: "abctl browser agents", Version: version},
		&mcp.ServerOptions{Instructions: instructions, Logger: logger})
	s.AddReceivingMiddleware(guard(logger))
	// Each group of tools gets the part of the client it calls; the
	// groups that start runs share how a run is waited for.
	follower := runFollower{runs: c.Runs, poll: opts.Poll}
	(&runTools{runs: c.Runs, actions: c.Actions, follower: follower}).register(s)
	(&humanTools{runs: c.Runs}).register(s)
	(&frameTools{runs: c.Runs}).register(s)
	(&agentTools{agents: c.Agents}).register(s)
	(&agentRunTools{agents: c.Agents, follower: follower}).register(s)
	(&folderTools{folders: c.Folders}).register(s)
	(&tagTools{agents: c.Agents, tags: c.Tags}).register(s)
	(&credentialTools{credentials: c.Credentials}).register(s)
	(&scheduleTools{schedules: c.Schedules}).register(s)
	(&customModelTools{models: c.CustomLLMs}).register(s)
	(&scriptTools{scripts: c.Scripts, follower: follower}).register(s)
	(&fleetTools{health: c.Health}).register(s)
	(&webUITools{link: c.SignInLink}).register(s)
	(&browserProfileTools{profiles: c.BrowserProfiles}).register(s)
	(&browserSessionTools{sessions: c.BrowserSessions, runs: c.Runs, follower: follower}).register(s)
	return s
}

// ServeStdio serves the tools over newline-delimited JSON-RPC on stdin and
// stdout, the transport desktop assistants start a local MCP server with,
// until stdin ends (nil error) or ctx is done (ctx's error). The requests
// read before stdin ended are answered before it returns. Only protocol
// messages are written to stdout.
func ServeStdio(ctx context.Context, c *client.Client, stdin io.Reader, stdout io.Writer, opts Options) error {
	s := New(c, opts)
	err := s.Run(ctx, &drainingTransport{in: stdin, out: stdout})
	if errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}

// guard protects the process from what a client sends: it turns a tool
// call's null or missing arguments into {} (the SDK's schema defaults
// would otherwise write into a nil map and panic), and turns any panic
// while handling a message into an error answer, logged with its stack,
// rather than the end of the daemon that serves the tools.
func guard(logger *slog.Logger) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			if call, ok := req.(*mcp.CallToolRequest); ok && call.Params != nil {
				if a := bytes.TrimSpace(call.Params.Arguments); len(a) == 0 || bytes.Equal(a, []byte("null")) {
					call.Params.Arguments = json.RawMessage("{}")
				}
			}
			defer func() {
				if v := recover(); v != nil {
					logger.ErrorContext(ctx, "mcpserver: panic while handling a message", "method", method, "panic", v, "stack", string(debug.Stack()))
					res, err = nil, fmt.Errorf("internal error of the MCP server while handling %s", method)
				}
			}()
			return next(ctx, method, req)
		}
	}
}

// mcpUserAgent is the x-user-agent of runs started through these tools.
const mcpUserAgent = "skyvern-mcp"

// ownTool ends the description of a tool the hosted service's MCP server
// does not have.
const ownTool = " (abctl's own tool: the hosted service's MCP server has no equivalent.)"

// spec describes one tool: its name, what a model reads about it, and how
// its derived input and output schemas are refined (enums, defaults and
// bounds, which struct tags cannot express, and the descriptions of
// members shared by several tools, such as paging's).
type spec struct {
	name         string
	title        string
	description  string
	annotations  *mcp.ToolAnnotations
	refine       func(props map[string]*jsonschema.Schema)
	refineAnswer func(props map[string]*jsonschema.Schema)
}

// addTool registers a typed tool. Its input schema is derived from In (the
// jsonschema tags are the descriptions) and refined by sp.refine; its
// output schema is derived from Out, by the SDK unless sp.refineAnswer
// refines it. Errors the handler returns become tool errors through
// describeError.
//
// Out is a pointer to a struct, and a handler that returns no error
// returns a non-nil Out.
func addTool[In, Out any](s *mcp.Server, sp spec, handle func(ctx context.Context, in In) (Out, error)) {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: input schema of %s: %v", sp.name, err))
	}
	if sp.refine != nil {
		sp.refine(schema.Properties)
	}
	tool := &mcp.Tool{
		Name: sp.name, Title: sp.title, Description: sp.description,
		Annotations: sp.annotations, InputSchema: schema,
	}
	if sp.refineAnswer != nil {
		// Derived as the SDK derives it: from the type Out points to.
		out, err := jsonschema.ForType(reflect.TypeFor[Out]().Elem(), &jsonschema.ForOptions{})
		if err != nil {
			panic(fmt.Sprintf("mcpserver: output schema of %s: %v", sp.name, err))
		}
		sp.refineAnswer(out.Properties)
		tool.OutputSchema = out
	}
	if tool.Annotations != nil && tool.Annotations.Title == "" {
		tool.Annotations.Title = sp.title
	}
	mcp.AddTool(s, tool, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		out, err := handle(ctx, in)
		if err != nil {
			var zero Out
			return nil, zero, describeError(err)
		}
		return nil, out, nil
	})
}

// Annotations of the tools, by effect.
func readOnly() *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
}

func writes(idempotent bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{DestructiveHint: new(false), IdempotentHint: idempotent, OpenWorldHint: new(false)}
}

func destroys(idempotent bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{DestructiveHint: new(true), IdempotentHint: idempotent, OpenWorldHint: new(false)}
}

// browses marks tools that drive a browser on the web.
func browses() *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(true)}
}

// describeError turns an error of the service into the text a model reads:
// the status and the service's detail, the part that says what to fix.
// Other errors (a bad argument found by a tool, a transport failure) are
// returned as they are.
func describeError(err error) error {
	var apiErr *client.Error
	if !errors.As(err, &apiErr) {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the service answered %d %s", apiErr.StatusCode, http.StatusText(apiErr.StatusCode))
	if apiErr.Detail != "" {
		b.WriteString(": ")
		b.WriteString(apiErr.Detail)
	}
	switch apiErr.StatusCode {
	case http.StatusForbidden:
		b.WriteString(" (check the API key the MCP server was given)")
	case http.StatusNotFound:
		b.WriteString(" (check the id; the list tools show the existing ones)")
	}
	if apiErr.RequestID != "" {
		fmt.Fprintf(&b, " [request id %s]", apiErr.RequestID)
	}
	return errors.New(b.String())
}

// argError reports a bad argument found by a tool (rather than by the
// schema), naming it.
func argError(name, format string, args ...any) error {
	return fmt.Errorf("argument %q: %s", name, fmt.Sprintf(format, args...))
}

// Schema refinements.

func enum(s *jsonschema.Schema, values ...string) {
	s.Enum = make([]any, len(values))
	for i, v := range values {
		s.Enum[i] = v
	}
}

func withDefault(s *jsonschema.Schema, v string) { s.Default = []byte(v) }

func bounds(s *jsonschema.Schema, lo, hi float64) {
	s.Minimum = &lo
	if hi > 0 {
		s.Maximum = &hi
	}
}

// nonEmpty requires the named string properties to be non-empty.
func nonEmpty(p map[string]*jsonschema.Schema, names ...string) {
	for _, n := range names {
		p[n].MinLength = new(1)
	}
}

// nonEmptyArgs is the refinement of a tool whose only refinement is
// nonEmpty(names...).
func nonEmptyArgs(names ...string) func(p map[string]*jsonschema.Schema) {
	return func(p map[string]*jsonschema.Schema) { nonEmpty(p, names...) }
}

// jsonOrText lets a property be a JSON value of the given types or a string
// holding one (assistants often pass JSON as text).
func jsonOrText(s *jsonschema.Schema, types ...string) {
	s.Type = ""
	s.Types = append(types, "string")
}
