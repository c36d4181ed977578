package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// The example against a real daemon whose runs follow the scripted
// executor's script (the prompt), so that no browser or model is needed.
func TestRunTask(t *testing.T) {
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: "example-key", Executor: &scripted.Executor{}})
	env := map[string]string{"ABCTL_BASE_URL": "http://" + addr, "ABCTL_API_KEY": "example-key"}
	var out, errOut bytes.Buffer
	err := run(t.Context(), []string{"-prompt", `script: steps=2;output={"heading":"Example Domain"}`, "-url", "http://127.0.0.1:1/"},
		func(k string) string { return env[k] }, &out, &errOut)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errOut.String())
	}
	var got map[string]string
	if err := json.Unmarshal(out.Bytes(), &got); err != nil || got["heading"] != "Example Domain" {
		t.Errorf("output %q (%v)", out.String(), err)
	}
	if !strings.HasPrefix(errOut.String(), "started tsk_") {
		t.Errorf("stderr %q", errOut.String())
	}

	out.Reset()
	err = run(t.Context(), []string{"-prompt", "script: status=terminated;reason=no such page"}, func(k string) string { return env[k] }, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "ended terminated: no such page") || out.Len() != 0 {
		t.Errorf("a terminated run: err %v, stdout %q", err, out.String())
	}
	if err := run(t.Context(), nil, func(k string) string { return env[k] }, &out, &errOut); err == nil {
		t.Error("no -prompt was accepted")
	}
}
