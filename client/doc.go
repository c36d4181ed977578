// Package client is a Go client of the v1 API of the browser-automation
// agent service: the hosted service, or a local `abctl daemon`, which
// serves the same API.
//
// # Getting started
//
//	c, err := client.New(client.WithBaseURL(client.HostedBaseURL), client.WithAPIKey(key))
//	run, err := c.Runs.StartTask(ctx, &client.TaskRunRequest{Prompt: "...", URL: "https://..."})
//	run, err = c.Runs.Wait(ctx, run.RunID, nil)
//	fmt.Println(run.Status, string(run.Output))
//
// The services group the operations by resource: Agents (definitions,
// versions, folders, tags), Runs (start, get, wait, watch, cancel, webhook
// retry, artifacts, tags), Folders, Tags (the tag registry) and Actions
// (single browser actions). Every method takes a context first and Options
// last; an Option given to a call applies to that call only.
//
// # Errors
//
// A reply with a non-2xx status is an *Error carrying the status code, the
// service's detail (a string, or the validation entries of a 422), and the
// request id when the service sent one. errors.Is matches it against
// ErrNotFound, ErrForbidden, ErrConflict, ErrValidation, ErrRateLimited,
// ErrBadRequest and ErrServer. Transport failures and context errors are
// returned as they are. The API key travels only in the x-api-key header and
// never appears in an error or a log record.
//
// # Retries
//
// A request is retried (2 times by default, see WithMaxRetries) when the
// connection is refused, and when the service answers 429, 502, 503 or 504,
// waiting as long as a Retry-After (or Retry-After-Ms) header asks, or else
// 0.5 s doubling up to 8 s, less up to 25% of jitter. Waits end early when
// the context does. The context bounds the whole call, retries included;
// WithRequestTimeout bounds each attempt.
//
// Operations that create something (starting a run, creating or updating an
// agent, creating a folder, running an action, re-sending a webhook) are
// retried only when the request provably never reached the service (the
// connection was refused, or failed before the request was written), because
// after a lost reply a retry could start a second run. WithIdempotencyKey
// lifts that restriction for services that honour the key: the service then
// treats the repeat as the same request.
//
// # Wire types
//
// Field names are those of the API in Go's casing. Timestamps are Time,
// which reads and writes the service's zone-less UTC form. Enumerations are
// string types with constants; values this package does not know decode
// without error (an unknown RunStatus is not terminal). Unknown response
// fields are ignored. Agent definitions are AgentDefinition, whose blocks
// are a union on block_type (Block); a block type this package does not know
// is kept as UnknownBlock and written back unchanged.
//
// # Webhooks
//
// Package client/webhook verifies the signature of the webhook a run sends
// when it ends, and builds signed bodies for senders.
package client
