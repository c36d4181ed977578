package pgtest_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/abctl/abctl/internal/pgtest"
)

// TestServer: a started server takes connections on its socket only, and
// each database NewDatabase makes is empty and apart from the others.
func TestServer(t *testing.T) {
	srv := pgtest.Start(t)
	ctx := t.Context()

	a, b := srv.NewDatabase(t), srv.NewDatabase(t)
	if a == b {
		t.Fatalf("two databases with one URL: %s", a)
	}
	ca := connect(t, a)
	cb := connect(t, b)

	if _, err := ca.Exec(ctx, `CREATE TABLE runs (id text PRIMARY KEY, status text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Exec(ctx, `INSERT INTO runs VALUES ($1, $2)`, "wr_1", "queued"); err != nil {
		t.Fatal(err)
	}
	var status string
	if err := ca.QueryRow(ctx, `SELECT status FROM runs WHERE id = $1`, "wr_1").Scan(&status); err != nil || status != "queued" {
		t.Fatalf("read back: %q, %v", status, err)
	}
	// The other database does not have the table.
	_, err := cb.Exec(ctx, `SELECT 1 FROM runs`)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "42P01" { // undefined_table
		t.Fatalf("the second database sees the first one's table: %v", err)
	}

	// No TCP: the server listens on its socket alone.
	var listen string
	if err := ca.QueryRow(ctx, `SHOW listen_addresses`).Scan(&listen); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(listen) != "" {
		t.Errorf("listen_addresses = %q, want none", listen)
	}
	if !strings.Contains(a, "host=%2F") {
		t.Errorf("the URL %s does not name the socket's directory", a)
	}
}

// TestServersApart: two servers of one test are two servers.
func TestServersApart(t *testing.T) {
	one, two := pgtest.Start(t), pgtest.Start(t)
	if one.URL("postgres") == two.URL("postgres") {
		t.Fatalf("two servers with one URL: %s", one.URL("postgres"))
	}
	c1 := connect(t, one.URL("postgres"))
	c2 := connect(t, two.URL("postgres"))
	ctx := t.Context()
	if _, err := c1.Exec(ctx, `CREATE DATABASE only_here`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := c2.QueryRow(ctx, `SELECT count(*) FROM pg_database WHERE datname = 'only_here'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the second server has the first one's database: %d, %v", n, err)
	}
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestShared: the tests of a binary share one server, each in a database
// of its own.
func TestShared(t *testing.T) {
	first := pgtest.Shared(t)
	var second *pgtest.Server
	t.Run("another test", func(t *testing.T) { second = pgtest.Shared(t) })
	if first != second {
		t.Fatal("Shared started a second server")
	}
	a, b := first.NewDatabase(t), second.NewDatabase(t)
	if a == b {
		t.Fatalf("two databases with one URL: %s", a)
	}
	var one int
	if err := connect(t, b).QueryRow(t.Context(), `SELECT 1`).Scan(&one); err != nil || one != 1 {
		t.Fatalf("the shared server: %d, %v", one, err)
	}
}
