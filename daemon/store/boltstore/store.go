// Package boltstore is the embedded backend of package daemon/store: the
// daemon's records in one bbolt file of its data directory, so that a
// daemon that stops or crashes finds them again as they were. Only one
// process may have the file open (store.Options.LockTimeout: how long Open
// waits for the file lock).
//
// The Store keeps the organizations and their API keys; the records of an
// organization are reached through one type per kind (Agents, Folders,
// Tags, Runs, Credentials, Profiles, BrowserSessions, Schedules, CustomLLMs,
// Uploads, Scripts), each implementing the interface of the same name in
// package store, and all sharing the Store's file and transactions.
//
// # Bucket tree
//
// Keep this drawing up to date with every schema change, and add a step to
// the migrations for it.
//
//	meta/
//	    schema_version                      -> uint64 BE: the last migration applied
//	    secret_check                        -> a known text sealed under Options.Secret: Open
//	                                           refuses a secret that cannot open it
//	    run_view_format                     -> the Format of the Options.RunViews that made
//	                                           the run views; Open re-makes
//	                                           them all when its RunViews' Format differs
//	api_keys/
//	    <sha256(key), 32 bytes>             -> apiKeyRecord JSON {org_id, sha256, created_at,
//	                                           sealed: the key under Options.Secret}
//	organizations/
//	    <org id>                            -> orgRecord JSON {id, name, created_at}
//	runs_pending/
//	    <org id> 0x00 <run id>              -> empty: the runs not finished, which a restarting
//	                                           daemon resumes or ends: not yet terminal, or
//	                                           terminal with their webhook not yet delivered
//	org_data/
//	    <org id>/                           one bucket per organization; every record
//	                                        below belongs to that organization only
//	        agents/
//	            <wpid> 0x00 <version uint32 BE> -> client.Agent JSON: one version row, as the API
//	                                           answers it (its definition in the response
//	                                           shape, package daemon/definition)
//	        agent_summaries/
//	            <wpid>                      -> agentSummary JSON: what listing filters on,
//	                                           derived from the latest version row
//	        agent_order/
//	            <created_at int64 BE> <wpid> -> a copy of the agent's summary (empty in entries
//	                                           written before the copy existed): the agents
//	                                           that are not deleted, by their latest
//	                                           version's created_at (unix nanoseconds, sign
//	                                           bit flipped)
//	        folders/
//	            <folder id>                 -> folderRecord JSON (client.Folder + deleted_at)
//	        folder_counts/
//	            <folder id>                 -> uint64 BE: agents not deleted whose latest
//	                                           version is in the folder
//	        runs/
//	            <run id>                    -> RunRecord JSON: a run, rewritten at every move
//	        run_views/
//	            <run id>                    -> opaque bytes that Options.RunViews made of the
//	                                           record (the daemon's: the run's answer to GET,
//	                                           encoded, with holes for its URLs, package
//	                                           daemon/runview); written with the record
//	                                          , absent when none was made
//	        run_order/
//	            <created_at int64 BE> <run id> -> run summary (binary): what the run
//	                                           list shows and filters on, written with the
//	                                           record; created_at as in agent_order
//	        run_steps/
//	            <run id> 0x00 <step uint32 BE> -> client.RunStep JSON: one step of the run,
//	                                           its newest MaxRunSteps kept
//	        run_blocks/
//	            <run id> 0x00 <n uint32 BE> -> client.RunBlock JSON: the run's nth block
//	                                           execution, its newest MaxRunBlocks kept
//	        credentials/
//	            <credential id>             -> credentialRecord JSON: name, type, what answers
//	                                           show (username, card's last four and brand,
//	                                           secret's label) and the secret itself sealed
//	        totp_codes/
//	            <identifier> 0x00 <created_at int64 BE> <code id> -> client.TOTPCode JSON: a
//	                                           pushed one-time code not yet used or expired
//	        browser_profiles/
//	            <profile id>                -> profileRecord JSON: client.BrowserProfile and
//	                                           its browser state sealed
//	        browser_states/
//	            'r' 0x00 <run id>           -> the browser state a run kept, sealed
//	            'a' 0x00 <wpid>             -> the browser state an agent with
//	                                           persist_browser_session starts from, sealed
//	            's' 0x00 <session id>       -> the browser state a browser session with
//	                                           generate_browser_profile closed with, sealed
//	        browser_sessions/
//	            <session id>                -> client.BrowserSession JSON
//	        schedules/                      agent schedules
//	            <schedule id>               -> ScheduleRecord JSON: the agent (wpid), cron
//	                                           expression, time zone, enabled, parameters,
//	                                           and the scheduler's mark (handled_through:
//	                                           the fire times at or before it are done),
//	                                           moved with the run it starts (Fire)
//	        custom_llms/                    the organization's model endpoints
//	            <custom LLM id>             -> customLLMRecord JSON {id, config (api_key always
//	                                           null), created_at, modified_at, valid,
//	                                           sealed_key: the API key sealed}
//	        uploads/                        files uploaded with /v1/upload_file
//	            <artifact id>               -> Upload JSON {id, dir, name, size, sha256,
//	                                           created_at}: the bytes are in the artifact
//	                                           directory, <org id>/<dir>/<name>
//	        scripts/                        recorded scripts of agents
//	            <script id>                 -> scriptRecord JSON {id, workflow_permanent_id ("" for
//	                                           a script of no agent), cache_key, created_at,
//	                                           modified_at, latest: its latest version,
//	                                           deleted_at}
//	        script_versions/
//	            <script id> 0x00 <version uint32 BE>/  a version
//	                record                  -> scriptVersionRecord JSON {revision id, version,
//	                                           run_id, created_at, sha256 of the content}
//	                content                 -> the bytes of script.yaml, as they are
//	            <script id> 0x00 <version uint32 BE> -> a version written before the buckets
//	                                           above: scriptVersionRecord JSON with the
//	                                           content inside (base64), read as it is
//	        script_index/
//	            <wpid> 0x00 <cache key>     -> the script id that runs of the agent with this
//	                                           cache key replay and record into
//	        tag_keys/
//	            <key>                       -> tagKeyRecord JSON {key, description}: the registry
//	        tag_values/
//	            <key> 0x00 <value>          -> tagValueRecord JSON {key, value, color}
//	        tags/                           the current tags of agents and runs
//	            <subject> 0x00 0x00 <value> -> tagRow JSON: a standalone label
//	            <subject> 0x00 0x01 <key>   -> tagRow JSON: a grouped tag (key:value)
//	                                           (subject: a wpid_ or a wr_ id; this order
//	                                           lists labels first, then keys, as the API does)
//	        tag_index/                      who carries what, for filters and cascades
//	            'k' <key> 0x00 <value> 0x00 <subject> -> empty (grouped tags)
//	            'v' <value> 0x00 <key> 0x00 <subject> -> empty (all tags; key empty for labels)
//	        tag_events/
//	            <subject> 0x00 <set_at int64 BE> <event id uint64 BE> -> client.TagEvent JSON
//	                                           (set_at in unix nanoseconds, sign bit flipped;
//	                                           read backwards for newest first)
//
// # Rules
//
//   - Values are JSON (but the run list's summaries, and the run views,
//     which the store does not read); integer keys are big-endian and
//     fixed-width, so that bbolt's byte order is their numeric order.
//   - Transactions are short. Values are decoded inside the transaction that
//     read them (bbolt's bytes are only valid there) and the decoded copies
//     are returned: callers may change what they get.
//   - Every write is durable when the method returns: bbolt fsyncs on
//     commit and the store never sets NoSync.
//   - Writes go through Store.update, which commits the writes that arrive
//     together in one transaction and one fsync (group commit)
//     and returns only once that commit is durable. The write functions of
//     a group run one after another in that transaction, so a check and
//     the write it guards (the idempotent agent create) stay atomic; a
//     write function may run more than once and changes nothing but the
//     transaction and the variables it sets afresh.
//   - The summary, the order index and the folder counters of an agent
//     change in the same transaction as its version rows, all through
//     putSummary; a run's view, list entry and runs_pending entry change
//     with its record, all through putRun.
//   - Ids of another organization answer ErrNotFound, as if they did not
//     exist, because every lookup goes through that organization's bucket.
//
// # Schema versions
//
// meta/schema_version holds the number of the last migration applied. Open
// applies the missing ones, in order, in one read-write transaction, and
// refuses a file whose version is newer than the binary knows
// (ErrSchemaTooNew) instead of guessing at its layout.
package boltstore

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
)

// Bucket names. See the package comment for the tree.
var (
	bucketMeta          = []byte("meta")
	bucketAPIKeys       = []byte("api_keys")
	bucketOrganizations = []byte("organizations")
	bucketOrgData       = []byte("org_data")
	bucketRunsPending   = []byte("runs_pending")

	// Per organization, under org_data/<org id>/.
	bucketAgents          = []byte("agents")
	bucketAgentSummaries  = []byte("agent_summaries")
	bucketAgentOrder      = []byte("agent_order")
	bucketFolders         = []byte("folders")
	bucketFolderCounts    = []byte("folder_counts")
	bucketTagKeys         = []byte("tag_keys")
	bucketTagValues       = []byte("tag_values")
	bucketTags            = []byte("tags")
	bucketTagIndex        = []byte("tag_index")
	bucketTagEvents       = []byte("tag_events")
	bucketRuns            = []byte("runs")
	bucketRunViews        = []byte("run_views")
	bucketRunOrder        = []byte("run_order")
	bucketRunSteps        = []byte("run_steps")
	bucketRunBlocks       = []byte("run_blocks")
	bucketCredentials     = []byte("credentials")
	bucketTOTPCodes       = []byte("totp_codes")
	bucketProfiles        = []byte("browser_profiles")
	bucketBrowserStates   = []byte("browser_states")
	bucketBrowserSessions = []byte("browser_sessions")
	bucketSchedules       = []byte("schedules")
	bucketCustomLLMs      = []byte("custom_llms")
	bucketUploads         = []byte("uploads")
	bucketScripts         = []byte("scripts")
	bucketScriptVersions  = []byte("script_versions")
	bucketScriptIndex     = []byte("script_index")

	// orgBuckets are the buckets of every organization (see orgTx).
	orgBuckets = orgBucketNames[:]

	keySchemaVersion = []byte("schema_version")
)

// Store is the daemon's database. It is safe for concurrent use: reads run
// in parallel, writes are serialised by bbolt.
//
// The Store itself holds the organizations and their API keys; the records
// of an organization are reached through one type per kind (see the
// package comment), which share the Store's file and transactions.
type Store struct {
	db     *bolt.DB
	path   string
	now    func() time.Time
	ids    *ids.Generator
	sealer *store.Sealer
	views  store.RunViews // nil: runs are stored without views
	// commits groups concurrent writes into one commit (commit.go).
	commits *committer
	// authCache maps the SHA-256 of API keys that authenticated to their
	// Organization (see Authenticate).
	authCache sync.Map
	// orgs counts the organizations (OrganizationCount): read at Open,
	// raised by each CreateOrganization of this process.
	orgs atomic.Int64

	agents  Agents
	folders Folders
	runs    Runs
	tags    Tags

	credentials Credentials
	profiles    Profiles
	sessions    BrowserSessions
}

// The backend implements every interface of package store.
var (
	_ store.Store           = (*Store)(nil)
	_ store.Agents          = (*Agents)(nil)
	_ store.Folders         = (*Folders)(nil)
	_ store.Runs            = (*Runs)(nil)
	_ store.Tags            = (*Tags)(nil)
	_ store.Credentials     = (*Credentials)(nil)
	_ store.Profiles        = (*Profiles)(nil)
	_ store.BrowserSessions = (*BrowserSessions)(nil)
	_ store.Schedules       = (*Schedules)(nil)
	_ store.CustomLLMs      = (*CustomLLMs)(nil)
	_ store.Uploads         = (*Uploads)(nil)
	_ store.Scripts         = (*Scripts)(nil)
)

// Agents returns the agents of the organizations.
func (s *Store) Agents() store.Agents { return &s.agents }

// Folders returns the folders of the organizations.
func (s *Store) Folders() store.Folders { return &s.folders }

// Runs returns the runs of the organizations.
func (s *Store) Runs() store.Runs { return &s.runs }

// Tags returns the tags of agents and runs and the organizations' tag
// registries.
func (s *Store) Tags() store.Tags { return &s.tags }

// Credentials returns the credentials and one-time codes of the
// organizations.
func (s *Store) Credentials() store.Credentials { return &s.credentials }

// Profiles returns the browser profiles and the browser states runs and
// agents kept.
func (s *Store) Profiles() store.Profiles { return &s.profiles }

// BrowserSessions returns the browser sessions of the organizations.
func (s *Store) BrowserSessions() store.BrowserSessions { return &s.sessions }

// Open opens (creating if needed) the store file at path and brings its
// schema up to date. The directory is created with mode 0700 and the file
// with 0600. If another process has the file open, Open waits up to
// opts.LockTimeout and then fails with an error matching ErrLocked.
func Open(path string, opts store.Options) (*Store, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.IDs == nil {
		w, err := randomWorker()
		if err != nil {
			return nil, err
		}
		opts.IDs = ids.New(w)
	}
	sl, err := store.NewSealer(opts.Secret)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("store: create the data directory: %w", err)
	}
	// NoStatistics: nothing reads the database's transaction counters,
	// and keeping them costs every read transaction shared atomic adds.
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: opts.LockTimeout, NoStatistics: true})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, &lockedError{cause: err, msg: fmt.Sprintf(
				"store: %s is locked: another abctl daemon is using this data directory (%s)",
				path, filepath.Dir(path))}
		}
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	s := &Store{db: db, path: path, now: opts.Now, ids: opts.IDs, sealer: sl, views: opts.RunViews, commits: &committer{db: db}}
	s.agents, s.folders, s.runs, s.tags, s.credentials, s.profiles = Agents{s}, Folders{s}, Runs{s}, Tags{s}, Credentials{s}, Profiles{s}
	s.sessions = BrowserSessions{s}
	// A wrong secret stops Open before anything is written.
	if err := verifySecret(db, sl); err != nil {
		db.Close()
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	if err := migrate(db, path, migrations); err != nil {
		db.Close()
		return nil, err
	}
	if err := refreshRunViews(db, s.views); err != nil {
		db.Close()
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	if err := recordSecret(db, sl); err != nil {
		db.Close()
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	if err := db.View(func(tx *bolt.Tx) error {
		s.orgs.Store(int64(tx.Bucket(bucketOrganizations).Stats().KeyN))
		return nil
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: count the organizations: %w (%s)", err, path)
	}
	return s, nil
}

// Close closes the file and releases its lock.
func (s *Store) Close() error { return s.db.Close() }

// Path returns the file the store was opened on.
func (s *Store) Path() string { return s.path }

func randomWorker() (uint32, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, fmt.Errorf("store: random worker id: %w", err)
	}
	return binary.BigEndian.Uint32(b[:]), nil
}

// migration is one step of the schema. Steps are applied in order, each at
// most once, and never change once released: a new layout is a new step.
type migration struct {
	version uint64
	name    string
	apply   func(tx *bolt.Tx) error
}

// migrations is the schema's history; the last entry is the version this
// binary writes.
var migrations = []migration{
	{version: 1, name: "create the top-level buckets", apply: func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketMeta, bucketAPIKeys, bucketOrganizations, bucketOrgData} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	}},
	{version: 2, name: "tag buckets in every organization", apply: func(tx *bolt.Tx) error {
		data := tx.Bucket(bucketOrgData)
		return data.ForEachBucket(func(org []byte) error {
			root := data.Bucket(org)
			for _, name := range [][]byte{bucketTagKeys, bucketTagValues, bucketTags, bucketTagIndex, bucketTagEvents} {
				if _, err := root.CreateBucketIfNotExists(name); err != nil {
					return err
				}
			}
			return nil
		})
	}},
	{version: 3, name: "runs", apply: func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(bucketRunsPending); err != nil {
			return err
		}
		data := tx.Bucket(bucketOrgData)
		return data.ForEachBucket(func(org []byte) error {
			_, err := data.Bucket(org).CreateBucketIfNotExists(bucketRuns)
			return err
		})
	}},
	// The views are written by refreshRunViews, which Open runs next when
	// it has RunViews: it finds no fingerprint of their format.
	{version: 4, name: "run views", apply: func(tx *bolt.Tx) error {
		data := tx.Bucket(bucketOrgData)
		return data.ForEachBucket(func(org []byte) error {
			_, err := data.Bucket(org).CreateBucketIfNotExists(bucketRunViews)
			return err
		})
	}},
	// The run list's index of the runs already stored (runlist.go); a
	// later layout of its summaries is a later step that rewrites them.
	{version: 5, name: "run list index and run steps", apply: func(tx *bolt.Tx) error {
		data := tx.Bucket(bucketOrgData)
		return data.ForEachBucket(func(org []byte) error {
			root := data.Bucket(org)
			for _, name := range [][]byte{bucketRunOrder, bucketRunSteps} {
				if _, err := root.CreateBucketIfNotExists(name); err != nil {
					return err
				}
			}
			if err := indexRuns(root); err != nil {
				return fmt.Errorf("organization %s: %w", org, err)
			}
			return nil
		})
	}},
	// The timeline became the hosted service's blocks and thoughts: the
	// block executions get their bucket, and the steps, stored until now
	// wrapped in the timeline entry they were answered as, are stored bare.
	{version: 6, name: "run blocks; run steps stored bare", apply: func(tx *bolt.Tx) error {
		data := tx.Bucket(bucketOrgData)
		return data.ForEachBucket(func(org []byte) error {
			root := data.Bucket(org)
			if _, err := root.CreateBucketIfNotExists(bucketRunBlocks); err != nil {
				return err
			}
			if err := unwrapRunSteps(root.Bucket(bucketRunSteps)); err != nil {
				return fmt.Errorf("organization %s: %w", org, err)
			}
			return nil
		})
	}},
	{version: 7, name: "credentials and one-time codes", apply: func(tx *bolt.Tx) error {
		data := tx.Bucket(bucketOrgData)
		return data.ForEachBucket(func(org []byte) error {
			root := data.Bucket(org)
			for _, name := range [][]byte{bucketCredentials, bucketTOTPCodes} {
				if _, err := root.CreateBucketIfNotExists(name); err != nil {
					return err
				}
			}
			return nil
		})
	}},
	{version: 8, name: "browser profiles and kept browser states", apply: func(tx *bolt.Tx) error {
		data := tx.Bucket(bucketOrgData)
		return data.ForEachBucket(func(org []byte) error {
			root := data.Bucket(org)
			for _, name := range [][]byte{bucketProfiles, bucketBrowserStates} {
				if _, err := root.CreateBucketIfNotExists(name); err != nil {
					return err
				}
			}
			return nil
		})
	}},
	{version: 9, name: "browser sessions", apply: func(tx *bolt.Tx) error {
		data := tx.Bucket(bucketOrgData)
		return data.ForEachBucket(func(org []byte) error {
			_, err := data.Bucket(org).CreateBucketIfNotExists(bucketBrowserSessions)
			return err
		})
	}},
	{version: 10, name: "schedules, custom models and uploaded files", apply: func(tx *bolt.Tx) error {
		data := tx.Bucket(bucketOrgData)
		return data.ForEachBucket(func(org []byte) error {
			root := data.Bucket(org)
			for _, name := range [][]byte{bucketSchedules, bucketCustomLLMs, bucketUploads} {
				if _, err := root.CreateBucketIfNotExists(name); err != nil {
					return err
				}
			}
			return nil
		})
	}},
	{version: 11, name: "scripts", apply: func(tx *bolt.Tx) error {
		data := tx.Bucket(bucketOrgData)
		return data.ForEachBucket(func(org []byte) error {
			root := data.Bucket(org)
			for _, name := range [][]byte{bucketScripts, bucketScriptVersions, bucketScriptIndex} {
				if _, err := root.CreateBucketIfNotExists(name); err != nil {
					return err
				}
			}
			return nil
		})
	}},
}

// SchemaVersion is the schema version this binary writes.
func SchemaVersion() uint64 { return migrations[len(migrations)-1].version }

// migrate applies the migrations the file lacks, in one transaction.
func migrate(db *bolt.DB, path string, steps []migration) error {
	latest := steps[len(steps)-1].version
	return db.Update(func(tx *bolt.Tx) error {
		var current uint64
		if meta := tx.Bucket(bucketMeta); meta != nil {
			if v := meta.Get(keySchemaVersion); v != nil {
				if len(v) != 8 {
					return fmt.Errorf("store: %s: corrupt schema version (%d bytes)", path, len(v))
				}
				current = binary.BigEndian.Uint64(v)
			}
		}
		if current > latest {
			return store.Errorf(store.ErrSchemaTooNew,
				"store: %s has schema version %d, but this abctl knows versions up to %d: use a newer abctl",
				path, current, latest)
		}
		if current == latest {
			return nil
		}
		for _, m := range steps {
			if m.version <= current {
				continue
			}
			if err := m.apply(tx); err != nil {
				return fmt.Errorf("store: %s: migration %d (%s): %w", path, m.version, m.name, err)
			}
		}
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		return meta.Put(keySchemaVersion, u64(latest))
	})
}

// getJSON decodes the JSON record stored under id in b into a new T. An id
// that names no record, or that cannot be a key (validID), answers a
// NotFoundError of kind r, the error every lookup by id returns.
func getJSON[T any](b *bolt.Bucket, r store.Record, id string) (*T, error) {
	var v []byte
	if validID(id) {
		v = b.Get([]byte(id))
	}
	if v == nil {
		return nil, notFound(r, id)
	}
	return records.Decode[T](v, r, id)
}

// putJSON stores v, encoded as JSON, under key in b.
func putJSON(b *bolt.Bucket, key []byte, v any) error {
	data, err := records.Encode(key, v)
	if err != nil {
		return err
	}
	return b.Put(key, data)
}

// u64 encodes v as 8 bytes big-endian.
func u64(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

// clock returns the store clock's time as the API keeps it (UTC,
// microseconds).
func (s *Store) clock() client.Time { return client.NewTime(s.now()) }

// orgTx holds the buckets of one organization within a transaction. Each
// bucket is opened on first use: a request touches two or three of them,
// and opening all of them cost a read of the agent a measurable share.
type orgTx struct {
	id   string
	root *bolt.Bucket
	open [len(orgBucketNames)]*bolt.Bucket
}

// The organization's buckets, by index in orgTx.open.
const (
	obAgents = iota
	obSummaries
	obOrder
	obFolders
	obCounts
	obTagKeys
	obTagValues
	obTags
	obTagIndex
	obTagEvents
	obRuns
	obRunViews
	obRunOrder
	obRunSteps
	obRunBlocks
	obCredentials
	obTOTPCodes
	obProfiles
	obBrowserStates
	obBrowserSessions
	obSchedules
	obCustomLLMs
	obUploads
	obScripts
	obScriptVersions
	obScriptIndex
)

var orgBucketNames = [...][]byte{
	obAgents: bucketAgents, obSummaries: bucketAgentSummaries, obOrder: bucketAgentOrder,
	obFolders: bucketFolders, obCounts: bucketFolderCounts, obTagKeys: bucketTagKeys,
	obTagValues: bucketTagValues, obTags: bucketTags, obTagIndex: bucketTagIndex,
	obTagEvents: bucketTagEvents, obRuns: bucketRuns, obRunViews: bucketRunViews,
	obRunOrder: bucketRunOrder, obRunSteps: bucketRunSteps, obRunBlocks: bucketRunBlocks,
	obCredentials: bucketCredentials, obTOTPCodes: bucketTOTPCodes,
	obProfiles: bucketProfiles, obBrowserStates: bucketBrowserStates, obBrowserSessions: bucketBrowserSessions,
	obSchedules: bucketSchedules, obCustomLLMs: bucketCustomLLMs, obUploads: bucketUploads,
	obScripts: bucketScripts, obScriptVersions: bucketScriptVersions, obScriptIndex: bucketScriptIndex,
}

// bucket returns one of the organization's buckets. Every organization has
// all of them (CreateOrganization and the migrations make them), so a
// missing one is a corrupt file: it panics with a message saying so, which
// the server's recover turns into a logged 500.
func (o *orgTx) bucket(i int) *bolt.Bucket {
	if b := o.open[i]; b != nil {
		return b
	}
	b := o.root.Bucket(orgBucketNames[i])
	if b == nil {
		panic(fmt.Sprintf("store: organization %s has no %s bucket: the data file is damaged", o.id, orgBucketNames[i]))
	}
	o.open[i] = b
	return b
}

func (o *orgTx) agents() *bolt.Bucket          { return o.bucket(obAgents) }
func (o *orgTx) summaries() *bolt.Bucket       { return o.bucket(obSummaries) }
func (o *orgTx) order() *bolt.Bucket           { return o.bucket(obOrder) }
func (o *orgTx) folders() *bolt.Bucket         { return o.bucket(obFolders) }
func (o *orgTx) counts() *bolt.Bucket          { return o.bucket(obCounts) }
func (o *orgTx) tagKeys() *bolt.Bucket         { return o.bucket(obTagKeys) }
func (o *orgTx) tagValues() *bolt.Bucket       { return o.bucket(obTagValues) }
func (o *orgTx) tags() *bolt.Bucket            { return o.bucket(obTags) }
func (o *orgTx) tagIndex() *bolt.Bucket        { return o.bucket(obTagIndex) }
func (o *orgTx) tagEvents() *bolt.Bucket       { return o.bucket(obTagEvents) }
func (o *orgTx) runs() *bolt.Bucket            { return o.bucket(obRuns) }
func (o *orgTx) runViews() *bolt.Bucket        { return o.bucket(obRunViews) }
func (o *orgTx) runOrder() *bolt.Bucket        { return o.bucket(obRunOrder) }
func (o *orgTx) runSteps() *bolt.Bucket        { return o.bucket(obRunSteps) }
func (o *orgTx) runBlocks() *bolt.Bucket       { return o.bucket(obRunBlocks) }
func (o *orgTx) credentials() *bolt.Bucket     { return o.bucket(obCredentials) }
func (o *orgTx) totpCodes() *bolt.Bucket       { return o.bucket(obTOTPCodes) }
func (o *orgTx) profiles() *bolt.Bucket        { return o.bucket(obProfiles) }
func (o *orgTx) browserStates() *bolt.Bucket   { return o.bucket(obBrowserStates) }
func (o *orgTx) browserSessions() *bolt.Bucket { return o.bucket(obBrowserSessions) }
func (o *orgTx) schedules() *bolt.Bucket       { return o.bucket(obSchedules) }
func (o *orgTx) customLLMs() *bolt.Bucket      { return o.bucket(obCustomLLMs) }
func (o *orgTx) uploads() *bolt.Bucket         { return o.bucket(obUploads) }
func (o *orgTx) scripts() *bolt.Bucket         { return o.bucket(obScripts) }
func (o *orgTx) scriptVersions() *bolt.Bucket  { return o.bucket(obScriptVersions) }
func (o *orgTx) scriptIndex() *bolt.Bucket     { return o.bucket(obScriptIndex) }

// openOrg returns the buckets of one organization, or ErrNotFound.
func openOrg(tx *bolt.Tx, orgID string) (*orgTx, error) {
	var root *bolt.Bucket
	if data := tx.Bucket(bucketOrgData); data != nil && validID(orgID) {
		root = data.Bucket([]byte(orgID))
	}
	if root == nil {
		return nil, notFound(store.RecordOrganization, orgID)
	}
	return &orgTx{id: orgID, root: root}, nil
}

// viewOrg runs fn in a read transaction on the buckets of one
// organization (ErrNotFound when it does not exist).
func (s *Store) viewOrg(ctx context.Context, orgID string, fn func(o *orgTx) error) error {
	return s.view(ctx, func(tx *bolt.Tx) error {
		o, err := openOrg(tx, orgID)
		if err != nil {
			return err
		}
		return fn(o)
	})
}

// updateOrg runs fn in a write transaction on the buckets of one
// organization (ErrNotFound when it does not exist).
func (s *Store) updateOrg(ctx context.Context, orgID string, fn func(o *orgTx) error) error {
	return s.update(ctx, func(tx *bolt.Tx) error {
		o, err := openOrg(tx, orgID)
		if err != nil {
			return err
		}
		return fn(o)
	})
}

// validID reports whether id can be a key (records.ValidID): ids the store
// makes are printable ASCII; a NUL byte would break the composite agent
// keys.
func validID(id string) bool { return records.ValidID(id) }
