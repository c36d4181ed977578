package follow

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
)

func TestFlags(t *testing.T) {
	var fl Flags
	cmd := &cobra.Command{Use: "watch"}
	fl.Add(cmd)
	if err := cmd.ParseFlags([]string{"--timeout", "90s", "--no-tui"}); err != nil {
		t.Fatal(err)
	}
	if fl.Timeout != 90*time.Second || !fl.NoTUI {
		t.Errorf("%+v", fl)
	}
}

// TestWriteOutput: a run's output is always a JSON document on stdout,
// null when it has none.
func TestWriteOutput(t *testing.T) {
	var b bytes.Buffer
	if err := WriteOutput(&b, &client.Run{}); err != nil || b.String() != "null\n" {
		t.Errorf("no output: %q %v", b.String(), err)
	}
	b.Reset()
	if err := WriteOutput(&b, &client.Run{Output: json.RawMessage(`{"b":1,"a":2}`)}); err != nil || b.String() != "{\n  \"b\": 1,\n  \"a\": 2\n}\n" {
		t.Errorf("output: %q %v", b.String(), err)
	}
}
