// Package store is the seam between `abctl daemon` and its database:
// everything the daemon keeps of its organizations, so that a daemon that
// stops or crashes finds them again as they were.
//
// The package declares what a backend offers and what it answers with, and
// holds no database of its own:
//
//   - the interfaces (interfaces.go): Store keeps the organizations and
//     their API keys, and reaches the records of an organization through
//     one interface per kind: Agents (every version of each agent),
//     Folders, Tags (the tags of agents and runs, and the tag registry),
//     Runs (each run's record, its view, list entry, steps and block
//     executions), Credentials (and pushed one-time codes), Profiles
//     (browser profiles and the browser states runs and agents keep),
//     BrowserSessions, Schedules (and the scheduler's marks), CustomLLMs
//     (the organization's model endpoints), Uploads (the records of
//     uploaded files) and Scripts (the scripts recorded for agents);
//   - the values they take and return (RunRecord, ScheduleRecord,
//     AgentQuery, Organization, ...), and the pure functions on them
//     (IsTerminal, CustomModelOf);
//   - the errors (errors.go): every backend fails with the same sentinel
//     errors, typed errors and messages;
//   - the Sealer (seal.go): every backend seals secrets the same way, so
//     that sealed values can be copied from one to another as they are;
//   - RunViews, the maker of the views stored with runs, and Options.
//
// Two backends implement the interfaces: package daemon/store/boltstore,
// one embedded bbolt file in the daemon's data directory (the default, for
// one daemon), and package daemon/store/pgstore, a PostgreSQL database that
// several daemons can share. Both give the same answers byte for byte; the
// conformance suite in package daemon/store/storetest checks it. Callers
// depend on the interfaces; only the code that chooses a backend (the
// daemon's start, the daemon's organization commands, tests and benches)
// imports one.
//
// The store stores what it is given: the shape of an agent's definition,
// a run's answer and the wording of errors for clients belong to the
// layers above it (packages daemon/definition, daemon/runview,
// daemon/api).
//
// Rules every backend keeps:
//
//   - Every write is durable when the method returns.
//   - Values returned are copies: callers may change what they get.
//   - Ids of another organization answer ErrNotFound, as if they did not
//     exist: nothing of one organization is reachable through another's id.
package store

import (
	"time"

	"github.com/abctl/abctl/daemon/ids"
)

// Options configures the opening of a backend (boltstore.Open). The zero
// value is ready to use.
type Options struct {
	// LockTimeout is how long Open waits for its database before it gives
	// up with ErrLocked: for the embedded store, how long it waits for
	// another process to release the file lock; 0 means 1s.
	LockTimeout time.Duration
	// Now is the clock of created_at and modified_at; nil means time.Now.
	Now func() time.Time
	// IDs makes the snowflake ids; nil means ids.New with a random worker.
	IDs *ids.Generator
	// Secret (SecretSize bytes, kept outside the database) seals the copies
	// of API keys that sign webhooks (seal.go). Without it keys are kept
	// as hashes only and SigningKey finds none.
	Secret []byte
	// RunViews makes the views stored with runs (runview.go); the daemon
	// gives package daemon/runview's. nil stores runs without views: reads
	// of a run then build its answer from the record.
	RunViews RunViews
}
