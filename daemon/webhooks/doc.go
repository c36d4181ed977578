// Package webhooks builds and delivers the daemon's run-completion webhooks,
// as docs/daemon.md describes them, so that receivers written for the
// hosted service accept the daemon's deliveries unchanged.
//
// The package knows nothing of the daemon's store: the runner's Webhooks
// (package daemon/runner) turns a run's record into a *client.Run (the GET
// /v1/runs/{id} answer that package daemon/runview builds, URLs already
// absolute) plus an [Info], asks [Payload] for the body, has a [Sender]
// deliver it, and stores the [Delivery]. Serialisation and signing are those
// of the client/webhook package ([webhook.Body], [webhook.SignedHeaders]);
// this package never formats JSON or computes a signature itself.
//
// # When and how often
//
// The caller sends one webhook when a run enters a terminal status
// (completed, failed, terminated, timed_out or canceled, including runs that
// failed before executing) and a URL is configured. A [Sender] makes exactly
// one attempt: there is no automatic retry, although the hosted service
// retries on its own (docs/hosted-service.md). When the attempt fails, the caller
// records why in the run's webhook_failure_reason; a run that had completed
// also turns failed, with a failure_reason that says its webhook could not
// be sent, keeping its output, while a run that ended otherwise keeps its
// status and its own failure_reason (see the daemon's runner). Logs name
// the receiver by [LogHost] only. POST /v1/runs/{run_id}/retry_webhook
// sends again with [RetryPayload]; [Replay] turns that attempt into the
// answer. Receivers may therefore see a run twice and should use run_id as
// the idempotency key.
//
// # The payload: one superset for every run type
//
// The hosted service's payload differs per run type (docs/hosted-service.md):
// a task-v1 payload has no prompt, url, summary, organization_id or
// workflow_* keys, a workflow-run payload has no task_id, prompt or summary,
// and each type has its own key order. The daemon sends one documented
// superset instead, the same keys in the same order for every run type:
//
//  1. every field of [webhook.Payload], in its order, which are the fields
//     the hosted service documents for its webhooks: run_id, task_id,
//     status, output, summary, prompt, url, downloaded_files,
//     recording_url, screenshot_urls, failure_reason, errors, step_count,
//     run_type, app_url, organization_id, workflow_run_id, workflow_id,
//     workflow_permanent_id, proxy_location, webhook_callback_url,
//     webhook_failure_reason, created_at, modified_at, queued_at,
//     started_at, finished_at;
//  2. then the run-response fields those lack, and the agent-run fields a
//     receiver of workflow runs reads: recording_archived,
//     browser_session_id, browser_profile_id, max_screenshot_scrolls,
//     script_run, totp_verification_url, totp_identifier, workflow_title,
//     parameters, run_with, ai_fallback, script_id, run_request.
//
// Values follow the hosted service where it has them: task_id repeats
// run_id; workflow_id is the internal w_ id for task v2 but the wpid_
// permanent id for workflow runs; webhook_failure_reason is always null;
// downloaded_files and errors are arrays, never null; timestamps are UTC
// without a zone. summary is the executor's account of what the run did
// ([Info].Summary: the local engine writes one for every run type that
// reaches its agent loop). A string field of the first group the daemon
// does not know for a run type (summary when the executor gave none, the
// workflow_* ids of a task-v1 run, prompt and url of a workflow run) is "",
// because [webhook.Payload] types those fields as plain strings; a field of
// the second group that does not apply is null (run_request is sent for
// workflow runs only, as upstream does).
// parameters keeps the values' bytes but its keys come sorted, because it
// is a Go map. Keys of the hosted service's payloads outside this set
// (extracted_information, failure_category, total_steps, outputs, task_v2,
// extra_http_headers, cdp_connect_headers, model, ...) are absent.
//
// Key order is not something a receiver can depend on anyway: the signature
// covers the exact bytes, and decoding by key works in any order.
//
// # The retry payload
//
// Upstream, a retried payload differs from the original: task-v2 retries
// drop prompt, summary, organization_id and the workflow_* keys,
// workflow-run retries drop webhook_callback_url, the totp keys and
// run_request. The daemon does not copy that: [RetryPayload] builds the
// same superset as [Payload] from the run's current state, because a retry
// sends the run's payload again (docs/daemon.md), and a receiver that reads
// prompt or workflow_permanent_id would break on a retry. Current state means exactly what GET /v1/runs/{id} shows: a
// completed run whose first delivery failed is re-sent with status failed
// and the webhook's failure_reason, its output unchanged; a run that ended
// otherwise is re-sent as it ended.
//
// # Delivery
//
// A [Sender] POSTs the body with Content-Type application/json,
// x-skyvern-signature (the lowercase hex HMAC-SHA256 of the body, keyed with
// the API key the caller passes: the organization's key that created the
// run) and x-skyvern-timestamp (Unix seconds, the true time: the hosted
// service's value is skewed by its host's UTC offset). The receiver has 10
// seconds, by default, to answer with a 2xx status; the limit covers the
// whole exchange, from connecting to the end of the (bounded) read of the
// answer's first 2048 characters. Redirects are not followed: a 3xx answer
// is a failed delivery, as it is for the hosted service's HTTP client.
//
// The default HTTP client ignores HTTP_PROXY and HTTPS_PROXY: receivers are
// usually on the same machine, and a proxy from the environment would see,
// or break, every delivery.
//
// # Loopback and private addresses are allowed
//
// The hosted service refuses webhook URLs that resolve to loopback, private
// or link-local addresses (an SSRF defence). The daemon does not: it runs on
// the user's machine for the user's own receivers, which are usually on
// localhost or the local network, and a caller able to start runs can
// already reach those addresses. The only URL checks are that, after
// trimming surrounding whitespace, it parses, its scheme is http or https
// and it has a host.
package webhooks
