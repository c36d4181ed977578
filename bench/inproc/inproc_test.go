package inproc

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/bench/internal/fixture"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/api"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/boltstore"
)

// env is the seeded daemon every benchmark shares, built once.
var env struct {
	once    sync.Once
	err     error
	dir     string
	st      *boltstore.Store
	srv     http.Handler
	key     string // the seeded organization's
	wkey    string // an empty organization's, for BenchmarkCreateAgent
	wpids   []string
	folders []string
	body    []byte // a POST /v1/agents body
	ceiling *bolt.DB
}

func TestMain(m *testing.M) {
	code := m.Run()
	if env.st != nil {
		env.st.Close()
	}
	if env.ceiling != nil {
		env.ceiling.Close()
	}
	if env.dir != "" {
		os.RemoveAll(env.dir)
	}
	os.Exit(code)
}

func setup(b *testing.B) {
	b.Helper()
	env.once.Do(func() { env.err = build() })
	if env.err != nil {
		b.Fatal(env.err)
	}
}

func build() error {
	n := 10000
	if s := os.Getenv("BENCH_AGENTS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			return fmt.Errorf("BENCH_AGENTS=%q", s)
		}
	}
	dir, err := os.MkdirTemp("", "abctl-inproc-")
	if err != nil {
		return err
	}
	env.dir = dir
	ctx := context.Background()
	st, err := boltstore.Open(filepath.Join(dir, datadir.StoreFileName), store.Options{})
	if err != nil {
		return err
	}
	env.st = st
	if _, env.key, err = st.CreateOrganization(ctx, "default"); err != nil {
		return err
	}
	// Creates go to another organization, so that they do not grow the
	// list the searches walk.
	if _, env.wkey, err = st.CreateOrganization(ctx, "writes"); err != nil {
		return err
	}
	// The daemon logs every request as text on stderr; keep that cost.
	env.srv = api.NewServer(st, slog.New(slog.NewTextHandler(io.Discard, nil)))

	for i := range 20 {
		title, desc := fixture.Folder(i)
		var f client.Folder
		if err := call("POST", "/v1/folders", map[string]string{"title": title, "description": desc}, &f); err != nil {
			return err
		}
		env.folders = append(env.folders, f.FolderID)
	}
	start := time.Now()
	env.wpids = make([]string, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				def, _ := fixture.Definition(i)
				path := "/v1/agents"
				if i%5 != 0 {
					path += "?folder_id=" + env.folders[i%len(env.folders)]
				}
				var a client.Agent
				if err := call("POST", path, &client.AgentRequest{JSONDefinition: def}, &a); err != nil {
					errs <- err
					return
				}
				env.wpids[i] = a.WorkflowPermanentID
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "inproc: seeded %d agents in %.1f s\n", n, time.Since(start).Seconds())

	def, _ := fixture.Definition(n + 1)
	if env.body, err = json.Marshal(&client.AgentRequest{JSONDefinition: def}); err != nil {
		return err
	}

	// The ceiling: 10,000 records of 1 KiB in a bbolt file of its own.
	if env.ceiling, err = bolt.Open(filepath.Join(dir, "ceiling.db"), 0o600, nil); err != nil {
		return err
	}
	env.ceiling.MaxBatchDelay = time.Millisecond // as bench/ceiling's POST /record-group
	rec := bytes.Repeat([]byte("x"), 1024)
	return env.ceiling.Update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucket([]byte("records"))
		if err != nil {
			return err
		}
		for i := uint64(1); i <= 10000; i++ {
			if err := bk.Put(binary.BigEndian.AppendUint64(nil, i), rec); err != nil {
				return err
			}
		}
		return nil
	})
}

// call sends one request through the handler and decodes a 200 reply.
func call(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	w := serve(method, path, rd)
	if w.Code != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", method, path, w.Code, w.Body)
	}
	return json.Unmarshal(w.Body.Bytes(), out)
}

func serve(method, path string, body io.Reader) *httptest.ResponseRecorder {
	return serveAs(env.key, method, path, body)
}

func serveAs(key, method, path string, body io.Reader) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, body)
	r.Header.Set("x-api-key", key)
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	env.srv.ServeHTTP(w, r)
	return w
}

// get serves b.N GETs, the path of the i-th from pick(i).
func get(b *testing.B, pick func(i int) string) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if w := serve("GET", pick(i), nil); w.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", pick(i), w.Code, w.Body)
		}
	}
}

// BenchmarkCeilingGet is the read ceiling of bench/ceiling without the
// network: one 1 KiB record in a read transaction, copied out and written.
func BenchmarkCeilingGet(b *testing.B) {
	setup(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		w := httptest.NewRecorder()
		var val []byte
		env.ceiling.View(func(tx *bolt.Tx) error {
			val = append([]byte(nil), tx.Bucket([]byte("records")).Get(binary.BigEndian.AppendUint64(nil, uint64(i%10000+1)))...)
			return nil
		})
		w.Header().Set("Content-Type", "application/json")
		w.Write(val)
	}
}

func BenchmarkGetAgent(b *testing.B) {
	setup(b)
	get(b, func(i int) string { return "/v1/agents/" + env.wpids[(i*7919)%len(env.wpids)] })
}

func BenchmarkGetFolder(b *testing.B) {
	setup(b)
	get(b, func(i int) string { return "/v1/folders/" + env.folders[i%len(env.folders)] })
}

// BenchmarkUnknownFolder is authentication, routing and an error reply: the
// fixed cost of every request.
func BenchmarkUnknownFolder(b *testing.B) {
	setup(b)
	b.ReportAllocs()
	for b.Loop() {
		if w := serve("GET", "/v1/folders/fld_0", nil); w.Code != http.StatusNotFound {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}

func BenchmarkCreateAgent(b *testing.B) {
	setup(b)
	b.ReportAllocs()
	for b.Loop() {
		if w := serveAs(env.wkey, "POST", "/v1/agents", bytes.NewReader(env.body)); w.Code != http.StatusOK {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}

func BenchmarkSearchHit(b *testing.B) {
	setup(b)
	get(b, func(int) string { return "/v1/agents?search_key=" + fixture.SearchTerm })
}

func BenchmarkSearchScan(b *testing.B) {
	setup(b)
	get(b, func(int) string { return "/v1/agents?search_key=no-such-agent" })
}

// BenchmarkCeilingPost is the write ceiling of bench/ceiling without the
// network: the POST body stored as one record in its own db.Update.
func BenchmarkCeilingPost(b *testing.B) {
	setup(b)
	b.ReportAllocs()
	for b.Loop() {
		body, _ := io.ReadAll(bytes.NewReader(env.body))
		err := env.ceiling.Update(func(tx *bolt.Tx) error {
			bk, err := tx.CreateBucketIfNotExists([]byte("writes"))
			if err != nil {
				return err
			}
			n, _ := bk.NextSequence()
			return bk.Put(binary.BigEndian.AppendUint64(nil, n), body)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateAgentParallel is BenchmarkCreateAgent from 50
// goroutines on 2 cores (wrk -c50's concurrency), where the store commits
// concurrent creates together: compare with BenchmarkCeilingPostGroup.
func BenchmarkCreateAgentParallel(b *testing.B) {
	setup(b)
	b.ReportAllocs()
	b.SetParallelism(max(1, 50/runtime.GOMAXPROCS(0)))
	commits0, writes0 := env.st.CommitStats()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if w := serveAs(env.wkey, "POST", "/v1/agents", bytes.NewReader(env.body)); w.Code != http.StatusOK {
				b.Errorf("%d %s", w.Code, w.Body)
				return
			}
		}
	})
	commits, writes := env.st.CommitStats()
	if commits > commits0 {
		b.ReportMetric(float64(writes-writes0)/float64(commits-commits0), "writes/commit")
	}
}

// BenchmarkCeilingPostGroup is bench/ceiling's POST /record-group without
// the network: the POST body stored by db.Batch (1 ms delay) from as many
// goroutines as BenchmarkCreateAgentParallel.
func BenchmarkCeilingPostGroup(b *testing.B) {
	setup(b)
	b.ReportAllocs()
	b.SetParallelism(max(1, 50/runtime.GOMAXPROCS(0)))
	var commits atomic.Int64
	var mu sync.Mutex
	var last *bolt.Tx
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			body, _ := io.ReadAll(bytes.NewReader(env.body))
			err := env.ceiling.Batch(func(tx *bolt.Tx) error {
				mu.Lock() // a batch's functions run one after another in its transaction
				if tx != last {
					last = tx
					commits.Add(1)
				}
				mu.Unlock()
				bk, err := tx.CreateBucketIfNotExists([]byte("writes"))
				if err != nil {
					return err
				}
				n, _ := bk.NextSequence()
				return bk.Put(binary.BigEndian.AppendUint64(nil, n), body)
			})
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	if n := commits.Load(); n > 0 {
		b.ReportMetric(float64(b.N)/float64(n), "writes/commit")
	}
}

// The JSON of one stored agent (what GET /v1/agents/{id} sends), decoded
// and encoded the way the daemon does (client.Agent) and, for scale, as a
// generic map and as a single validating pass.

func agentJSON(b *testing.B) []byte {
	setup(b)
	w := serve("GET", "/v1/agents/"+env.wpids[0], nil)
	if w.Code != http.StatusOK {
		b.Fatalf("%d %s", w.Code, w.Body)
	}
	b.SetBytes(int64(w.Body.Len()))
	b.ReportAllocs()
	return w.Body.Bytes()
}

func BenchmarkAgentJSONDecode(b *testing.B) {
	data := agentJSON(b)
	for b.Loop() {
		var a client.Agent
		if err := json.Unmarshal(data, &a); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAgentJSONEncode(b *testing.B) {
	data := agentJSON(b)
	var a client.Agent
	if err := json.Unmarshal(data, &a); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := json.Marshal(&a); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAgentJSONDecodeMap(b *testing.B) {
	data := agentJSON(b)
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAgentJSONEncodeMap(b *testing.B) {
	data := agentJSON(b)
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := json.Marshal(m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAgentJSONCompact(b *testing.B) {
	data := agentJSON(b)
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := json.Compact(&buf, data); err != nil {
			b.Fatal(err)
		}
	}
}
