package daemon_test

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/store"
)

// FuzzRequestBodies sends arbitrary bodies, as JSON and as YAML, to the
// routes that read one: whatever the input, the daemon answers 2xx or 4xx,
// never 5xx, and never panics.
func FuzzRequestBodies(f *testing.F) {
	seeds := []string{
		contactYAML,
		`{"json_definition":{"title":"t","workflow_definition":{"parameters":[],"blocks":[{"block_type":"for_loop","label":"l","loop_blocks":[{"block_type":"wait","label":"w"}]}]}}}`,
		`{"yaml_definition":"title: x\nworkflow_definition: {parameters: [], blocks: []}\n"}`,
		`{"title":"t","workflow_definition":{"parameters":[{"key":"k","parameter_type":"workflow","workflow_parameter_type":"json","default_value":{"a":[1,2]}}],"blocks":[]}}`,
		`{"title":"` + strings.Repeat("x", 300) + `"}`,
		"{\"json_definition\": {", "[]", "null", "title: &a [*a]\n", "? [a]\n: b\n", "\xff\xfe",
	}
	for _, s := range seeds {
		f.Add(s, true)
		f.Add(s, false)
	}
	st, err := store.Open(filepath.Join(f.TempDir(), "abctl.db"), store.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	_, key, err := st.CreateOrganization(f.Context(), "fuzz")
	if err != nil {
		f.Fatal(err)
	}
	h := daemon.NewServer(st, nil)
	routes := []struct{ method, path string }{
		{"POST", "/v1/agents"}, {"POST", "/v1/agents/wpid_1"}, {"POST", "/v1/folders"},
		{"PUT", "/v1/folders/fld_1"}, {"PUT", "/v1/agents/wpid_1/folder"},
	}
	f.Fuzz(func(t *testing.T, body string, asJSON bool) {
		ct := "text/plain"
		if asJSON {
			ct = "application/json"
		}
		for _, rt := range routes {
			req := httptest.NewRequest(rt.method, rt.path, strings.NewReader(body))
			req.Header.Set("X-Api-Key", key)
			req.Header.Set("Content-Type", ct)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code >= 500 || rec.Code < 200 {
				t.Fatalf("%s %s (%s) answered %d: %s", rt.method, rt.path, ct, rec.Code, rec.Body)
			}
			if rec.Code >= 400 && !strings.Contains(rec.Body.String(), `"detail"`) {
				t.Fatalf("%s %s answered %d without a detail: %s", rt.method, rt.path, rec.Code, rec.Body)
			}
		}
	})
}
