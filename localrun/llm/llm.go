package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/abctl/abctl/internal/retry"
)

// Model is one language model at one endpoint. Implementations are safe for
// concurrent use.
type Model interface {
	// Complete sends one request and returns the model's answer. Errors
	// from the provider or the network are *Error values (after retries);
	// a canceled or expired ctx gives ctx's error, wrapped. When
	// req.Schema is set and the answer holds no JSON at all, Complete
	// returns the Response (with Text, usage and timing) together with an
	// error that wraps ErrNoJSON, so that the caller can show the text or
	// ask again.
	Complete(ctx context.Context, req *Request) (*Response, error)
	// Info describes the model: provider, endpoint, name, capabilities.
	Info() Info
}

// Call kinds the engine uses in Request.Kind. Any short word works; these
// keep logs and test scripts consistent.
const (
	KindPlan      = "plan"           // choose the next actions
	KindVerify    = "verify"         // check a completion or a criterion
	KindExtract   = "extract"        // extract data against a schema
	KindRepair    = "repair"         // fix output that failed validation
	KindClassify  = "classify_error" // map a failure to a user error code
	KindLocate    = "locate"         // find the element for an intention
	KindSummarize = "summarize"      // summarise what a run did
	KindPrompt    = "prompt"         // a text_prompt block
)

// KindHeader is the HTTP header that carries Request.Kind on every call.
// Real providers ignore it; llmtest matches scripts on it.
const KindHeader = "X-Abctl-Call-Kind"

// Request is one call to a model.
type Request struct {
	// Kind says what the call is for (KindPlan, KindExtract, ...). It is
	// logged, and sent in the KindHeader header.
	Kind string
	// System is the system prompt.
	System string
	// Messages is the conversation: user and assistant turns, the last
	// one normally from the user.
	Messages []Message
	// Schema, when set, asks for one JSON value that follows it; the
	// answer is then in Response.JSON. Nil asks for free text.
	Schema *Schema
	// MaxTokens caps the answer's length; 0 leaves it to the provider
	// (Anthropic, which needs a value, gets DefaultMaxTokens).
	MaxTokens int
}

// Role is who speaks in a Message.
type Role string

// The roles of a conversation. The system prompt is Request.System.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one turn of the conversation.
type Message struct {
	Role  Role
	Parts []Part
}

// Part is a piece of a message: text, or an image when Image is set.
type Part struct {
	Text string
	// Image holds the bytes of a JPEG (or PNG, GIF, WebP: the type is read
	// from the bytes). Images are left out for models without vision.
	Image []byte
}

// UserText is a user message holding one text.
func UserText(text string) Message {
	return Message{Role: RoleUser, Parts: []Part{{Text: text}}}
}

// User is a user message from parts; see Text and Image.
func User(parts ...Part) Message { return Message{Role: RoleUser, Parts: parts} }

// AssistantText is an assistant message holding one text (an earlier
// answer, for a conversation that continues).
func AssistantText(text string) Message {
	return Message{Role: RoleAssistant, Parts: []Part{{Text: text}}}
}

// Text is a text part.
func Text(s string) Part { return Part{Text: s} }

// Image is an image part (JPEG, PNG, GIF or WebP bytes).
func Image(b []byte) Part { return Part{Image: b} }

// Schema is the JSON Schema an answer must follow.
type Schema struct {
	// Name identifies the schema to the provider (letters, digits, _ and
	// -, at most 64): the json_schema name for OpenAI-compatible servers,
	// the forced tool's name for Anthropic. Empty means "answer".
	Name string
	// Description says what the value is for (the tool description for
	// Anthropic). Optional.
	Description string
	// JSON is the schema. A root that is not an object is wrapped as the
	// "data" property of an object on the wire, since providers want
	// object roots; Response.JSON holds the unwrapped value.
	JSON json.RawMessage
}

// Response is a model's answer.
type Response struct {
	// Text is the answer as the model wrote it. With Anthropic's forced
	// tool it is the tool input, as JSON text.
	Text string
	// JSON is the answer as compact JSON when Request.Schema was set: the
	// value parsed from Text, repaired if needed (see ParseJSON). It is
	// not validated against the schema.
	JSON json.RawMessage
	// Repaired is true when JSON came out of ParseJSON's repairs (code
	// fences, prose, trailing commas, a cut-off answer) rather than being
	// the exact text.
	Repaired bool
	// Usage is the token count the provider reported for this call.
	Usage Usage
	// Model is the model name the provider says answered.
	Model string
	// Stop is the provider's reason for ending the answer ("stop",
	// "length", "end_turn", "tool_use", "max_tokens", ...), as sent.
	Stop string
	// Truncated is true when the answer ended at the token limit.
	Truncated bool
	// Duration is the wall time of the call, retries and waits included.
	Duration time.Duration
	// Attempts is the number of HTTP requests the call took (1 without
	// retries).
	Attempts int
}

// Usage counts tokens.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Total is input plus output tokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// Add returns the sum of u and o, for totals per run.
func (u Usage) Add(o Usage) Usage {
	return Usage{InputTokens: u.InputTokens + o.InputTokens, OutputTokens: u.OutputTokens + o.OutputTokens}
}

// Info describes a Model.
type Info struct {
	// Provider is the configured provider.
	Provider Provider
	// Endpoint is the URL the calls are posted to.
	Endpoint string
	// Model is the model name sent to the provider.
	Model string
	// Capabilities are what the model is used with.
	Capabilities Capabilities
}

// String is "provider model at endpoint", for logs and errors.
func (i Info) String() string {
	return fmt.Sprintf("%s model %q at %s", i.Provider, i.Model, i.Endpoint)
}

// Capabilities are what a model can be asked for.
type Capabilities struct {
	// Vision is true when the model reads images; without it, image parts
	// are not sent.
	Vision bool
	// Schema is how structured answers are requested.
	Schema SchemaMode
}

// SchemaMode is how a model is asked for an answer that follows a schema.
type SchemaMode string

// The schema modes. Whatever the mode, the answer goes through ParseJSON.
const (
	// SchemaJSONSchema sends the schema as the OpenAI-compatible
	// response_format {type: json_schema} (strict when the schema allows
	// it), which the server enforces.
	SchemaJSONSchema SchemaMode = "json_schema"
	// SchemaJSONObject asks an OpenAI-compatible server for JSON mode
	// (response_format {type: json_object}) and describes the schema in
	// the system prompt.
	SchemaJSONObject SchemaMode = "json_object"
	// SchemaTool makes an Anthropic model call one tool whose input schema
	// is the schema (tool_choice {type: tool}), and reads the tool input.
	SchemaTool SchemaMode = "tool"
	// SchemaPrompt only describes the schema in the system prompt.
	SchemaPrompt SchemaMode = "prompt"
)

// DefaultMaxTokens is the answer limit sent to Anthropic when
// Request.MaxTokens is 0 (the Messages API requires one).
const DefaultMaxTokens = 4096

// New returns the Model that cfg describes. Empty fields take the
// provider's defaults (see Config); the environment is not read (see
// ConfigFromEnv and Config.WithDefaults for that).
func New(cfg Config, opts ...Option) (Model, error) {
	cfg, err := cfg.complete()
	if err != nil {
		return nil, err
	}
	o := buildOptions(opts)
	switch cfg.Provider {
	case ProviderAnthropic:
		return newAnthropic(cfg, o), nil
	default:
		return newOpenAI(cfg, o), nil
	}
}

// Option adjusts how Models are built by New and NewRegistry.
type Option func(*options)

type options struct {
	http  *http.Client
	log   *slog.Logger
	sleep func(context.Context, time.Duration) error
}

// WithHTTPClient sets the HTTP client (default: one with sensible
// connection limits and no overall timeout; Config.Timeout bounds calls).
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.http = c } }

// WithLogger sends a record per call (kind, model, tokens, time) at debug
// level and per retry at warn level to l. API keys never appear.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithSleeper replaces the wait between retries (tests use it to see the
// waits without sleeping). The function must return ctx's error when ctx
// ends first.
func WithSleeper(f func(ctx context.Context, d time.Duration) error) Option {
	return func(o *options) { o.sleep = f }
}

func buildOptions(opts []Option) *options {
	o := &options{}
	for _, f := range opts {
		f(o)
	}
	if o.http == nil {
		o.http = defaultHTTPClient
	}
	if o.sleep == nil {
		o.sleep = retry.Sleep
	}
	if o.log == nil {
		o.log = slog.New(slog.DiscardHandler)
	}
	return o
}

// defaultHTTPClient is shared by all Models built without WithHTTPClient,
// so that connections to one provider are reused across models.
var defaultHTTPClient = &http.Client{
	Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     true,
	},
}
