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

// TestWriteOutput: a completed run's output is always a JSON document on
// stdout, null when it has none; a run that did not complete writes what it
// extracted, or nothing (issue 30: a failed run printed null).
func TestWriteOutput(t *testing.T) {
	var b bytes.Buffer
	if err := WriteOutput(&b, &client.Run{Status: client.RunStatusCompleted}); err != nil || b.String() != "null\n" {
		t.Errorf("no output: %q %v", b.String(), err)
	}
	for _, status := range []client.RunStatus{client.RunStatusFailed, client.RunStatusTerminated, client.RunStatusTimedOut, client.RunStatusCanceled} {
		b.Reset()
		if err := WriteOutput(&b, &client.Run{Status: status, Output: json.RawMessage("null")}); err != nil || b.Len() != 0 {
			t.Errorf("%s run without output: %q %v, want nothing", status, b.String(), err)
		}
		b.Reset()
		if err := WriteOutput(&b, &client.Run{Status: status, Output: json.RawMessage(`{"found":1}`)}); err != nil || b.String() != "{\n  \"found\": 1\n}\n" {
			t.Errorf("%s run with output: %q %v", status, b.String(), err)
		}
	}
	b.Reset()
	if err := WriteOutput(&b, &client.Run{Output: json.RawMessage(`{"b":1,"a":2}`)}); err != nil || b.String() != "{\n  \"b\": 1,\n  \"a\": 2\n}\n" {
		t.Errorf("output: %q %v", b.String(), err)
	}
}
