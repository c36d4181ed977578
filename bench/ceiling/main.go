// Command ceiling is the yardstick of bench/daemon.sh: the least an HTTP
// server on net/http and bbolt can do per request on this machine, measured
// in the same run as the daemon so that the daemon's figures can be read as
// a ratio to it.
//
//	GET  /record/{n}  reads record n (1..-records, 1 KiB each) in one read
//	                  transaction, copies it out and writes it: the read ceiling
//	GET  /sized/{n}   the same with records of -sized-bytes (default 6,656,
//	                  the size of the benchmark's agents as the API returns
//	                  them): the read ceiling for that payload, informative
//	POST /record      stores the request body as one new record in its own
//	                  db.Update, fsync on: the write ceiling of one commit
//	                  per request
//	POST /record-group the same through db.Batch with a 1 ms delay: the
//	                  requests that arrive together share one commit and one
//	                  fsync, each answered once it is durable: the group
//	                  commit ceiling
//
// There is no routing beyond the mux, no authentication, no JSON and no
// logging. It listens on loopback only and prints "listening on ADDR" once
// ready (with -addr 127.0.0.1:0 the kernel picks a free port).
package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
)

var (
	readBucket  = []byte("records")
	sizedBucket = []byte("sized")
	writeBucket = []byte("writes")
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "loopback address to listen on")
	path := flag.String("db", "", "bbolt file to create (required)")
	records := flag.Int("records", 10000, "1 KiB records to seed for GET /record/{n}")
	sizedBytes := flag.Int("sized-bytes", 6656, "size of the records of GET /sized/{n}")
	flag.Parse()
	if *path == "" {
		log.Fatal("ceiling: -db is required")
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		log.Fatalf("ceiling: -addr %q is not a loopback address", *addr)
	}

	// As the daemon's embedded store opens its database
	// (daemon/store/boltstore.Open), so that the ceiling gets what the
	// daemon gets from bbolt.
	db, err := bolt.Open(*path, 0o600, &bolt.Options{Timeout: time.Second, NoStatistics: true})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := seed(db, readBucket, *records, 1024); err != nil {
		log.Fatal(err)
	}
	if err := seed(db, sizedBucket, *records, *sizedBytes); err != nil {
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	read := func(bucket []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			n, err := strconv.ParseUint(r.PathValue("n"), 10, 64)
			if err != nil {
				http.Error(w, "bad record number", http.StatusBadRequest)
				return
			}
			var val []byte
			db.View(func(tx *bolt.Tx) error {
				if v := tx.Bucket(bucket).Get(key(n)); v != nil {
					val = append([]byte(nil), v...) // bbolt's bytes die with the transaction
				}
				return nil
			})
			if val == nil {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write(val)
		}
	}
	mux.HandleFunc("GET /record/{n}", read(readBucket))
	mux.HandleFunc("GET /sized/{n}", read(sizedBucket))
	db.MaxBatchDelay = time.Millisecond
	write := func(commit func(func(*bolt.Tx) error) error) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			var n uint64
			err = commit(func(tx *bolt.Tx) error {
				b := tx.Bucket(writeBucket)
				n, _ = b.NextSequence()
				return b.Put(key(n), body)
			})
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":%d}`, n)
		}
	}
	mux.HandleFunc("POST /record", write(db.Update))
	mux.HandleFunc("POST /record-group", write(db.Batch))

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		<-sig
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

// key is record n's key: 8 bytes big-endian.
func key(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

// seed creates both buckets and fills the read bucket with records 1..n,
// each a JSON object of exactly 1,024 bytes, in one transaction.
func seed(db *bolt.DB, bucket []byte, n, size int) error {
	return db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(writeBucket); err != nil {
			return err
		}
		b, err := tx.CreateBucketIfNotExists(bucket)
		if err != nil {
			return err
		}
		for i := 1; i <= n; i++ {
			head := fmt.Sprintf(`{"id":%d,"pad":"`, i)
			rec := make([]byte, 0, size)
			rec = append(rec, head...)
			for len(rec) < size-2 {
				rec = append(rec, 'x')
			}
			rec = append(rec, '"', '}')
			if err := b.Put(key(uint64(i)), rec); err != nil {
				return err
			}
		}
		return nil
	})
}
