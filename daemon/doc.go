// Package daemon is the program behind `abctl daemon`: Run opens the store
// (package daemon/store) in the data directory, builds the model registry
// (package llm) and the browser engine (package engine), starts the run
// queue (package daemon/runner) and serves the HTTP API (package
// daemon/api) until its context ends, publishing its address and admin
// token for `abctl daemon orgs` (package daemon/admin).
//
// This package is the wiring only: it is the one place where the HTTP face
// and the engine meet, so that neither imports the other.
package daemon
