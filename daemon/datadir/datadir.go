// Package datadir names the parts of a daemon's data directory and the
// address it listens on by default: what the daemon writes there and what
// other programs (the CLI's default profile, `abctl daemon orgs`, tests and
// benchmarks) read, without linking the daemon.
package datadir

// DefaultAddr is where the daemon listens unless told otherwise: loopback
// only, so that nothing outside the machine reaches it by default.
const DefaultAddr = "127.0.0.1:8780"

// StoreFileName is the bbolt file in the data directory.
const StoreFileName = "abctl.db"

// KeyFileName is the file in the data directory that holds the default
// organization's first API key (mode 0600), where the CLI's default profile
// reads it.
const KeyFileName = "api-key"

// SecretFileName is the file in the data directory (mode 0600) holding the
// daemon's secret: it seals the organizations' credentials and the copies
// of API keys that sign webhooks, and signs artifact URLs. Without it the
// credentials cannot be read (the daemon refuses to start with another
// secret); keep it with the store's backups, apart from them.
const SecretFileName = "secret"

// ArtifactsDirName is the directory in the data directory holding the
// files runs produce.
const ArtifactsDirName = "artifacts"

// StateFileName is the file in the data directory where a running daemon
// publishes its address and process id (mode 0600).
const StateFileName = "daemon.json"

// AdminSocketName is the Unix socket in the data directory (mode 0600) on
// which a running daemon serves its admin routes (package daemon/admin),
// and nowhere else: connecting to it is the authentication, as with
// Docker's and containerd's sockets.
const AdminSocketName = "admin.sock"
