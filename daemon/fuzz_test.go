package daemon_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abctl/abctl/daemon/api"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/boltstore"
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
		`{"tags":[{"key":"env","value":"prod"},{"value":"urgent"}],"tags_to_delete":[{"key":"team"}],"colors":{"env":"red"}}`,
		`{"tags":[{"key":"env","value":"a\u0000b"}],"tags_to_delete":[{"value":"x","key":null}]}`,
		`{"key":"env","value":"prod","new_value":"production","color":"Teal","description":null}`,
		`{"workflow_permanent_ids":["wpid_1","wpid_2"]}`,
	}
	for _, s := range seeds {
		f.Add(s, true)
		f.Add(s, false)
	}
	h, key, wpid := fuzzServer(f)
	routes := []struct{ method, path string }{
		{"POST", "/v1/agents"}, {"POST", "/v1/agents/wpid_1"}, {"POST", "/v1/folders"},
		{"PUT", "/v1/folders/fld_1"}, {"PUT", "/v1/agents/wpid_1/folder"},
		{"POST", "/v1/agents/" + wpid + "/tags"}, {"POST", "/v1/tag-values"},
		{"PATCH", "/v1/tag-values/env"}, {"DELETE", "/v1/tag-values/env"},
		{"PATCH", "/v1/tag-values/env/rename"}, {"PATCH", "/v1/tag-keys/env"},
		{"POST", "/v1/workflow-tags"},
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

// fuzzServer returns a handler over a real store with one organization
// (whose key it returns) and one agent (whose wpid it returns, so that the
// fuzzed routes of an agent reach the store).
func fuzzServer(f *testing.F) (h http.Handler, key, wpid string) {
	st, err := boltstore.Open(filepath.Join(f.TempDir(), "abctl.db"), store.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	_, key, err = st.CreateOrganization(f.Context(), "fuzz")
	if err != nil {
		f.Fatal(err)
	}
	h = api.NewServer(st, nil)
	req := httptest.NewRequest("POST", "/v1/agents", strings.NewReader(contactYAML))
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("Content-Type", "text/plain")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var a struct {
		WPID string `json:"workflow_permanent_id"`
	}
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &a) != nil || a.WPID == "" {
		f.Fatalf("create the fuzzing agent: %d %s", rec.Code, rec.Body)
	}
	return h, key, a.WPID
}

// FuzzQueries sends arbitrary query strings to the routes that read
// parameters (the agent list with its tags grammar, the tag history, the
// batch reads): the daemon answers 2xx or 4xx with a detail, never 5xx.
func FuzzQueries(f *testing.F) {
	for _, q := range []string{
		"tags=env:prod,env:dev&tags=urgent", "tags=", "tags=a,,b", "tags=:x", "tags=k:*&template=true",
		"search_key=first_name&page=2&page_size=1", "search_key=%25_%25", "status=draft&status=x",
		"limit=0&since=2026-01-01T00:00:00", "since=2026-13-01", "key=env&limit=500",
		"workflow_permanent_ids=wpid_1,,wpid_2", "tags=%00", "page=99999999999999999999",
		"status=completed&status=running,queued&run_type=task_v1&search_key=abc&workflow_permanent_id=wpid_1&page=100&page_size=100",
		"search_key=%C3%A9%C3%A9", "run_type=x&status=",
	} {
		f.Add(q)
	}
	h, key, wpid := fuzzServer(f)
	paths := []string{"/v1/agents", "/v1/agents/" + wpid + "/tags/history", "/v1/workflow-tags", "/v1/folders", "/v1/tag-values", "/v1/agents/" + wpid,
		"/v1/runs"}
	f.Fuzz(func(t *testing.T, query string) {
		for _, p := range paths {
			req := httptest.NewRequest("GET", "/", nil)
			req.URL.Path = p
			req.URL.RawQuery = query
			req.Header.Set("X-Api-Key", key)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code >= 500 || rec.Code < 200 {
				t.Fatalf("GET %s?%s answered %d: %s", p, query, rec.Code, rec.Body)
			}
			if rec.Code >= 400 && !strings.Contains(rec.Body.String(), `"detail"`) {
				t.Fatalf("GET %s?%s answered %d without a detail: %s", p, query, rec.Code, rec.Body)
			}
		}
	})
}
