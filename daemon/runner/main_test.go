package runner_test

import (
	"os"
	"testing"

	"github.com/abctl/abctl/internal/pgtest"
)

// TestMain stops the PostgreSQL server the shared-store tests start
// (pgtest.Shared) once they are done.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
