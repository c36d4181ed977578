package boltstore

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
)

const benchRuns = 200

// benchRunStore opens a store in b.TempDir() with benchRuns running task
// runs whose requests look like real ones.
func benchRunStore(b *testing.B) (*Store, string, []*store.RunRecord) {
	b.Helper()
	s, err := Open(filepath.Join(b.TempDir(), "abctl.db"), store.Options{IDs: ids.New(1)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	org, _, err := s.CreateOrganization(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	var recs []*store.RunRecord
	for i := range benchRuns {
		req := &client.TaskRunRequest{
			Prompt: fmt.Sprintf("Sign in to the supplier extranet, open the list of invoices, filter it to the last "+
				"30 days and extract every row's number, date, counterparty and total (batch %d).", i),
			URL:   fmt.Sprintf("https://portal%d.example.com/signin", i%40),
			Title: fmt.Sprintf("Collect invoices #%d", i),
		}
		echo, _ := json.Marshal(req)
		rec := &store.RunRecord{ID: s.Runs().NewID(client.RunTypeTaskV1), OrgID: org.ID, Type: client.RunTypeTaskV1,
			Status: client.RunStatusQueued, RunRequest: echo, Task: req, Title: req.Title,
			WebhookURL: "http://127.0.0.1:9/hook", BaseURL: "http://127.0.0.1:8780"}
		if err := s.Runs().Create(ctx, rec); err != nil {
			b.Fatal(err)
		}
		rec, err = s.Runs().Update(ctx, org.ID, rec.ID, func(r *store.RunRecord) error {
			r.Status = client.RunStatusRunning
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		recs = append(recs, rec)
	}
	return s, org.ID, recs
}

// BenchmarkRunWrite is Runs.Update recording a step of a running run: a
// read, the change, and the write of the record and its indexes,
// committed.
func BenchmarkRunWrite(b *testing.B) {
	s, org, recs := benchRunStore(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		id := recs[(i*7919)%len(recs)].ID
		_, err := s.Runs().Update(ctx, org, id, func(r *store.RunRecord) error {
			n := i
			r.StepCount = &n
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunCommitCeiling is the least a durable write costs in the same
// file: one 1 KiB value put and committed.
func BenchmarkRunCommitCeiling(b *testing.B) {
	s, _, _ := benchRunStore(b)
	val := make([]byte, 1024)
	if err := s.db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists([]byte("bench_ceiling"))
		return err
	}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		err := s.db.Update(func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("bench_ceiling")).Put(u64(uint64(i%benchRuns)), val)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutRun is the store's work for one run write without the
// commit: the record encoded and put, its indexes kept, in a transaction
// rolled back.
func BenchmarkPutRun(b *testing.B) {
	s, org, recs := benchRunStore(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		rec := recs[(i*7919)%len(recs)]
		n := i
		rec.StepCount = &n
		tx, err := s.db.Begin(true)
		if err != nil {
			b.Fatal(err)
		}
		o, err := openOrg(tx, org)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.runs.putRun(tx, o, rec); err != nil {
			b.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			b.Fatal(err)
		}
	}
}

// The run list over 10,000 runs, 1% of them running: its first page, a
// filter that walks every entry (status running), beside the least such a
// walk costs (the entries visited, nothing decoded) and the walk the list
// would need without its index (every record decoded).
//
//	go test ./daemon/store -run '^$' -bench 'ListRuns|RunOrderWalk|RunRecordsWalk' -count 5

const benchListRuns = 10000

func benchListStore(b *testing.B) (*Store, string) {
	b.Helper()
	s, err := Open(filepath.Join(b.TempDir(), "abctl.db"), store.Options{IDs: ids.New(1)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	org, _, err := s.CreateOrganization(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		o, err := openOrg(tx, org.ID)
		if err != nil {
			return err
		}
		for i := range benchListRuns {
			rec := &store.RunRecord{ID: s.Runs().NewID(client.RunTypeTaskV1), OrgID: org.ID, Type: client.RunTypeTaskV1,
				Status: client.RunStatusCompleted, Title: fmt.Sprintf("Collect invoices #%d", i),
				RunRequest: json.RawMessage(fmt.Sprintf(`{"prompt":"Collect the invoices of batch %d","url":"https://portal%d.example.com/"}`, i, i%40)),
				CreatedAt:  s.clock(), ModifiedAt: s.clock(), StartedAt: new(s.clock()), FinishedAt: new(s.clock())}
			if i%100 == 0 {
				rec.Status, rec.FinishedAt = client.RunStatusRunning, nil
			}
			if err := s.runs.putRun(tx, o, rec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return s, org.ID
}

func BenchmarkListRunsFirstPage10k(b *testing.B) {
	s, org := benchListStore(b)
	b.ReportAllocs()
	for b.Loop() {
		items, err := s.Runs().List(ctx, org, store.RunQuery{})
		if err != nil || len(items) != 10 {
			b.Fatalf("%d items, %v", len(items), err)
		}
	}
}

// BenchmarkListRunsScan10k: status=running&page_size=100, which visits
// every entry to find the 100 running runs.
func BenchmarkListRunsScan10k(b *testing.B) {
	s, org := benchListStore(b)
	b.ReportAllocs()
	for b.Loop() {
		items, err := s.Runs().List(ctx, org, store.RunQuery{PageSize: 100, Statuses: []client.RunStatus{client.RunStatusRunning}})
		if err != nil || len(items) != benchListRuns/100 {
			b.Fatalf("%d items, %v", len(items), err)
		}
	}
}

// BenchmarkRunOrderWalkCeiling10k visits every run_order entry, newest
// first, reading nothing of it: the least a walking filter costs.
func BenchmarkRunOrderWalkCeiling10k(b *testing.B) {
	s, org := benchListStore(b)
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		err := s.viewOrg(ctx, org, func(o *orgTx) error {
			c := o.runOrder().Cursor()
			for k, v := c.Last(); k != nil; k, v = c.Prev() {
				n += len(v) & 1
			}
			return nil
		})
		if err != nil || n < 0 {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunRecordsWalk10k is the same filter without the index: every
// run record decoded to read its status.
func BenchmarkRunRecordsWalk10k(b *testing.B) {
	s, org := benchListStore(b)
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		err := s.viewOrg(ctx, org, func(o *orgTx) error {
			return o.runs().ForEach(func(k, v []byte) error {
				rec, err := decodeRun(k, v)
				if err == nil && rec.Status == client.RunStatusRunning {
					n++
				}
				return err
			})
		})
		if err != nil || n != benchListRuns/100 {
			b.Fatalf("%d running, %v", n, err)
		}
	}
}
