// Package daemon is the program behind `abctl daemon`: Run opens the store
// (package daemon/store) in the data directory, builds the model registry
// (package localrun/llm) and the browser engine (package localrun/engine),
// starts the run queue (package daemon/runner) and serves the HTTP API
// (package daemon/api) until its context ends, publishing its address in
// the data directory and serving the admin routes `abctl daemon orgs` uses
// on a Unix socket there, never on the TCP port (package daemon/admin).
//
// This package is the wiring only: it is the one place where the HTTP face
// and the engine meet, so that neither imports the other. It also builds
// the parts that the layers share, once, and hands them to each: the id
// generator (store, run files, API); the stored views of runs (package
// daemon/runview), which the store keeps with every run and makes again
// when their format changes; the URLs of the answers about runs
// (runview.Links), which the API's answers and the webhooks' payloads
// carry; and the webhooks (runner.Webhooks), which the runner sends when a
// run ends and the API sends again on retry_webhook.
package daemon
