package daemon_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
)

func tagList(tags []client.Tag) []string {
	out := []string{}
	for _, t := range tags {
		if t.Key == nil {
			out = append(out, t.Value)
		} else {
			out = append(out, *t.Key+":"+t.Value)
		}
	}
	return out
}

// TestAgentTagsOverHTTP goes through every agent tag route and the
// registry with the client, as a user of the hosted service would.
func TestAgentTagsOverHTTP(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	agent, err := e.a.Agents.Create(ctx, definition("Tagged"), nil)
	if err != nil {
		t.Fatal(err)
	}
	id := agent.WorkflowPermanentID

	applied, err := e.a.Agents.ApplyTags(ctx, id, &client.TagApplyRequest{
		Tags:   []client.TagInput{{Key: "env", Value: " prod "}, {Value: "urgent"}, {Key: "team", Value: "a/b"}},
		Colors: map[string]client.TagColor{"env": " Green "},
	})
	if err != nil {
		t.Fatal(err)
	}
	if applied.WorkflowPermanentID != id || !slices.Equal(tagList(applied.Tags), []string{"urgent", "env:prod", "team:a/b"}) {
		t.Fatalf("applied %+v", applied)
	}
	got, err := e.a.Agents.GetTags(ctx, id)
	if err != nil || !slices.Equal(tagList(got.Tags), tagList(applied.Tags)) {
		t.Fatalf("GetTags %v, %v", got, err)
	}
	org, _ := e.store.Authenticate(ctx, e.key)
	if got.Tags[0].SetBy != org.ID || got.Tags[0].Source != client.TagSourceManual {
		t.Errorf("set_by %q source %q, want the organization id and manual", got.Tags[0].SetBy, got.Tags[0].Source)
	}

	// Delete by path key; absent keys are no-ops.
	after, err := e.a.Agents.DeleteTag(ctx, id, "team")
	if err != nil || !slices.Equal(tagList(after.Tags), []string{"urgent", "env:prod"}) {
		t.Fatalf("DeleteTag: %v, %v", after, err)
	}
	if _, err := e.a.Agents.DeleteTag(ctx, id, "never-set"); err != nil {
		t.Fatalf("DeleteTag of an absent key: %v", err)
	}

	hist, err := e.a.Agents.TagHistory(ctx, id, &client.TagHistoryOptions{Key: "team"})
	if err != nil || len(hist.Events) != 2 {
		t.Fatalf("history of team: %+v, %v", hist, err)
	}
	if ev := hist.Events[0]; ev.EventType != client.TagEventDelete || ev.Value != nil || !strings.HasPrefix(ev.TagEventID, "tge_") {
		t.Errorf("newest team event %+v", ev)
	}
	if ev := hist.Events[1]; ev.EventType != client.TagEventSet || ev.SupersededAt == nil {
		t.Errorf("superseded team SET %+v", ev)
	}
	limited, err := e.a.Agents.TagHistory(ctx, id, &client.TagHistoryOptions{Limit: 1})
	if err != nil || len(limited.Events) != 1 {
		t.Fatalf("limit 1: %+v, %v", limited, err)
	}

	// The registry.
	keys, err := e.a.Tags.ListKeys(ctx)
	if err != nil || len(keys) != 2 || keys[0].Key != "env" || keys[0].WorkflowCount != 1 || keys[1].WorkflowCount != 0 {
		t.Fatalf("keys %s, %v", mustMarshal(keys), err)
	}
	k, err := e.a.Tags.UpdateKey(ctx, "env", "Where it runs")
	if err != nil || k.Description == nil || *k.Description != "Where it runs" {
		t.Fatalf("UpdateKey %s, %v", mustMarshal(k), err)
	}
	values, err := e.a.Tags.ListValues(ctx, "env")
	if err != nil || len(values) != 1 || values[0].Color != client.TagColorGreen || values[0].WorkflowCount != 1 {
		t.Fatalf("values of env %s, %v", mustMarshal(values), err)
	}
	if _, err := e.a.Tags.CreateValue(ctx, &client.TagValueCreateRequest{Key: "env", Value: "dev", Color: client.TagColorBlue}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.a.Tags.CreateValue(ctx, &client.TagValueCreateRequest{Key: "env", Value: "dev"}); !errors.Is(err, client.ErrConflict) {
		t.Fatalf("duplicate value: %v, want 409", err)
	}
	v, err := e.a.Tags.UpdateValue(ctx, "env", "dev", client.TagColorPurple)
	if err != nil || v.Color != client.TagColorPurple {
		t.Fatalf("UpdateValue %s, %v", mustMarshal(v), err)
	}
	if _, err := e.a.Tags.RenameValue(ctx, "env", "prod", "dev"); !errors.Is(err, client.ErrConflict) {
		t.Fatalf("rename onto a taken value: %v, want 409", err)
	}
	ren, err := e.a.Tags.RenameValue(ctx, "env", "prod", "production")
	if err != nil || ren.Value != "production" || ren.Color != client.TagColorGreen || ren.RenamedWorkflowCount != 1 {
		t.Fatalf("RenameValue %s, %v", mustMarshal(ren), err)
	}
	list, err := e.a.Agents.List(ctx, &client.ListAgentsOptions{Tags: []string{"env:production"}})
	if err != nil || len(list) != 1 || list[0].WorkflowPermanentID != id {
		t.Fatalf("list by the renamed tag: %d, %v", len(list), err)
	}
	dv, err := e.a.Tags.DeleteValue(ctx, "env", "production")
	if err != nil || dv.RemovedFromWorkflowCount != 1 || dv.RemovedCount != 1 {
		t.Fatalf("DeleteValue %s, %v", mustMarshal(dv), err)
	}
	if _, err := e.a.Tags.DeleteValue(ctx, "env", "production"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("second DeleteValue: %v, want 404", err)
	}
	e.a.Agents.ApplyTags(ctx, id, &client.TagApplyRequest{Tags: []client.TagInput{{Key: "env", Value: "dev"}}})
	dk, err := e.a.Tags.DeleteKey(ctx, "env")
	if err != nil || dk.RemovedFromWorkflowCount != 1 {
		t.Fatalf("DeleteKey %s, %v", mustMarshal(dk), err)
	}
	if _, err := e.a.Tags.DeleteKey(ctx, "env"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("second DeleteKey: %v, want 404", err)
	}
	final, _ := e.a.Agents.GetTags(ctx, id)
	if !slices.Equal(tagList(final.Tags), []string{"urgent"}) {
		t.Fatalf("tags after the cascades: %v", tagList(final.Tags))
	}

	// Batch reads, GET and POST, echo every id.
	batch, err := e.a.Agents.BatchGetTags(ctx, []string{id, "wpid_404"})
	if err != nil || len(batch) != 2 || len(batch[id]) != 1 || batch["wpid_404"] == nil || len(batch["wpid_404"]) != 0 {
		t.Fatalf("batch %s, %v", mustMarshal(batch), err)
	}
	status, body := e.raw("POST", "/v1/workflow-tags", "application/json", fmt.Sprintf(`{"workflow_permanent_ids":[%q]}`, id))
	if status != 200 || body != fmt.Sprintf(`{"workflow_tags":{%q:[{"key":null,"value":"urgent"}]}}`, id) {
		t.Fatalf("POST /v1/workflow-tags: %d %s", status, body)
	}
	status, body = e.raw("GET", "/v1/workflow-tags", "", "")
	if status != 200 || body != `{"workflow_tags":{}}` {
		t.Fatalf("GET /v1/workflow-tags without ids: %d %s", status, body)
	}
}

// TestTagFilterOnList checks the tags grammar end to end, and its 400s.
func TestTagFilterOnList(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	mk := func(title string, tags ...client.TagInput) string {
		a, err := e.a.Agents.Create(ctx, definition(title), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.a.Agents.ApplyTags(ctx, a.WorkflowPermanentID, &client.TagApplyRequest{Tags: tags}); err != nil {
			t.Fatal(err)
		}
		return a.WorkflowPermanentID
	}
	prod := mk("prod", client.TagInput{Key: "env", Value: "prod"}, client.TagInput{Value: "urgent"})
	dev := mk("dev", client.TagInput{Key: "env", Value: "dev"}, client.TagInput{Key: "url", Value: "http://x:8080"})
	for _, tc := range []struct {
		tags []string
		want []string
	}{
		{[]string{"env:prod,env:dev"}, []string{dev, prod}},
		{[]string{"env:*", "urgent"}, []string{prod}},
		{[]string{"url:http://x:8080"}, []string{dev}},
		{[]string{" env : dev "}, []string{dev}},
	} {
		list, err := e.a.Agents.List(ctx, &client.ListAgentsOptions{Tags: tc.tags})
		if err != nil {
			t.Fatalf("tags %q: %v", tc.tags, err)
		}
		var got []string
		for _, a := range list {
			got = append(got, a.WorkflowPermanentID)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("tags %q: %v, want %v", tc.tags, got, tc.want)
		}
	}
	// A lone empty tags parameter is no filter at all.
	if status, body := e.raw("GET", "/v1/agents?tags=", "", ""); status != 200 || strings.Count(body, `"workflow_permanent_id"`) != 2 {
		t.Errorf("?tags= : %d %s", status, body)
	}
	many := make([]string, 21)
	for i := range many {
		many[i] = fmt.Sprintf("t%d", i)
	}
	for name, query := range map[string]string{
		"empty term":       "tags=a,,b",
		"empty key":        "tags=:prod",
		"empty value":      "tags=env:",
		"21 terms":         "tags=" + url.QueryEscape(strings.Join(many, ",")),
		"21 occurrences":   "tags=" + strings.Join(many, "&tags="),
		"empty occurrence": "tags=a&tags=",
		"with template":    "tags=a&template=true",
	} {
		status, body := e.raw("GET", "/v1/agents?"+query, "", "")
		var detail struct{ Detail string }
		if status != 400 || json.Unmarshal([]byte(body), &detail) != nil || detail.Detail == "" {
			t.Errorf("%s: %d %s, want 400 with a string detail", name, status, body)
		}
	}
}

// TestTagRequestValidation: every documented bound of the tag routes is a
// 4xx with a precise detail, and changes nothing.
func TestTagRequestValidation(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	agent, err := e.a.Agents.Create(ctx, definition("Validated"), nil)
	if err != nil {
		t.Fatal(err)
	}
	tagsPath := "/v1/agents/" + agent.WorkflowPermanentID + "/tags"
	var twentyOne []string
	for i := range 21 {
		twentyOne = append(twentyOne, fmt.Sprintf(`{"key":"k%d","value":"v"}`, i))
	}
	cases := []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"malformed", "POST", tagsPath, `{"tags": [`, 422, "json_invalid"},
		{"value missing", "POST", tagsPath, `{"tags":[{"key":"env"}]}`, 422, `"loc":["body","tags",0,"value"]`},
		{"value wrong type", "POST", tagsPath, `{"tags":[{"value":5}]}`, 422, `string_type`},
		{"bad key", "POST", tagsPath, `{"tags":[{"key":"-env","value":"x"}]}`, 422, `"loc":["body","tags",0,"key"]`},
		{"long key", "POST", tagsPath, `{"tags":[{"key":"` + strings.Repeat("k", 65) + `","value":"x"}]}`, 422, "at most 64"},
		{"reserved key", "POST", tagsPath, `{"tags":[{"key":"skyvern.source","value":"x"}]}`, 422, "reserved"},
		{"empty value", "POST", tagsPath, `{"tags":[{"key":"env","value":"  "}]}`, 422, "must not be empty"},
		{"long value", "POST", tagsPath, `{"tags":[{"key":"env","value":"` + strings.Repeat("v", 257) + `"}]}`, 422, "at most 256"},
		{"comma", "POST", tagsPath, `{"tags":[{"key":"env","value":"a,b"}]}`, 422, "must not contain ','"},
		{"label colon", "POST", tagsPath, `{"tags":[{"value":"env:prod"}]}`, 422, "must not contain ':'"},
		{"grouped star", "POST", tagsPath, `{"tags":[{"key":"env","value":"*"}]}`, 422, "must not be '*'"},
		{"21 tags", "POST", tagsPath, `{"tags":[` + strings.Join(twentyOne, ",") + `]}`, 422, `"too_long"`},
		{"delete neither", "POST", tagsPath, `{"tags_to_delete":[{}]}`, 422, "exactly one"},
		{"delete both", "POST", tagsPath, `{"tags_to_delete":[{"key":"a","value":"b"}]}`, 422, "exactly one"},
		{"bad colour", "POST", tagsPath, `{"tags":[{"key":"env","value":"x"}],"colors":{"env":"mauve"}}`, 422, "palette"},
		{"unknown agent", "POST", "/v1/agents/wpid_404/tags", `{"tags":[{"value":"x"}]}`, 404, "wpid_404"},
		{"bad path key", "DELETE", tagsPath + "/-bad", ``, 400, "Invalid tag key"},
		{"reserved path key", "DELETE", tagsPath + "/skyvern.x", ``, 400, "reserved"},
		{"history limit", "GET", tagsPath + "/history?limit=501", ``, 422, `"loc":["query","limit"]`},
		{"history since", "GET", tagsPath + "/history?since=yesterday", ``, 422, `"loc":["query","since"]`},
		{"run tags", "GET", "/v1/runs/wr_1/tags", ``, 404, "Workflow run wr_1 not found"},
		{"task run tags", "POST", "/v1/runs/tsk_1/tags", `{"tags":[]}`, 404, "Workflow run tsk_1 not found"},
		{"key description", "PATCH", "/v1/tag-keys/env", `{"description":"` + strings.Repeat("d", 501) + `"}`, 422, "string_too_long"},
		{"unknown key", "PATCH", "/v1/tag-keys/env", `{"description":"x"}`, 404, "Tag key env not found"},
		{"bad key path", "PATCH", "/v1/tag-keys/a%20b", `{}`, 400, "Invalid tag key"},
		{"delete unknown key", "DELETE", "/v1/tag-keys/env", ``, 404, "Tag key env not found"},
		{"value without key", "POST", "/v1/tag-values", `{"value":"x"}`, 422, `"loc":["body","key"]`},
		{"value star", "POST", "/v1/tag-values", `{"key":"env","value":"*"}`, 422, "must not be '*'"},
		{"value bad colour", "POST", "/v1/tag-values", `{"key":"env","value":"x","color":"mauve"}`, 422, "palette"},
		{"recolour missing colour", "PATCH", "/v1/tag-values/env", `{"value":"x"}`, 422, `"loc":["body","color"]`},
		{"recolour unknown", "PATCH", "/v1/tag-values/env", `{"value":"x","color":"red"}`, 404, "env:x not found"},
		{"delete value no body", "DELETE", "/v1/tag-values/env", ``, 422, `"missing"`},
		{"rename same", "PATCH", "/v1/tag-values/env/rename", `{"value":"x","new_value":"x"}`, 422, "must differ"},
		{"rename missing new", "PATCH", "/v1/tag-values/env/rename", `{"value":"x"}`, 422, `"loc":["body","new_value"]`},
		{"too many batch ids", "GET", "/v1/workflow-tags?workflow_permanent_ids=" + strings.Repeat("wpid_1x,", 150) + strings.Repeat("wpid_2x,", 51), ``, 200, `"workflow_tags"`},
		{"wrong method", "PUT", "/v1/tag-keys", `{}`, 405, "Method Not Allowed"},
	}
	// 201 distinct ids go over the batch limit; the case above repeats
	// ids, which count once.
	var distinct []string
	for i := range 201 {
		distinct = append(distinct, fmt.Sprintf("wpid_%d", i))
	}
	cases = append(cases, struct {
		name, method, path, body string
		status                   int
		want                     string
	}{"201 batch ids", "GET", "/v1/workflow-tags?workflow_permanent_ids=" + strings.Join(distinct, ","), ``, 400, "At most 200 workflow IDs"})

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ct := ""
			if tc.body != "" {
				ct = "application/json"
			}
			status, body := e.raw(tc.method, tc.path, ct, tc.body)
			if status != tc.status || !strings.Contains(body, tc.want) {
				t.Errorf("%d %s\nwant %d containing %s", status, body, tc.status, tc.want)
			}
		})
	}
	tags, err := e.a.Agents.GetTags(ctx, agent.WorkflowPermanentID)
	if err != nil || len(tags.Tags) != 0 {
		t.Errorf("bad requests left tags %v (%v)", tags, err)
	}
	if keys, _ := e.a.Tags.ListKeys(ctx); len(keys) != 0 {
		t.Errorf("bad requests registered keys %s", mustMarshal(keys))
	}
	// The over-20 cap is a 422 with a string detail.
	var inputs []client.TagInput
	for i := range 20 {
		inputs = append(inputs, client.TagInput{Key: fmt.Sprintf("k%d", i), Value: "v"})
	}
	if _, err := e.a.Agents.ApplyTags(ctx, agent.WorkflowPermanentID, &client.TagApplyRequest{Tags: inputs}); err != nil {
		t.Fatal(err)
	}
	_, err = e.a.Agents.ApplyTags(ctx, agent.WorkflowPermanentID, &client.TagApplyRequest{Tags: []client.TagInput{{Value: "one-more"}}})
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 422 || !strings.Contains(apiErr.Detail, "at most 20") {
		t.Errorf("21st tag: %v", err)
	}
}

// TestTagsAreIsolated: another organization's agents, tags and registry
// answer as if they did not exist.
func TestTagsAreIsolated(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	agent, err := e.a.Agents.Create(ctx, definition("A's"), nil)
	if err != nil {
		t.Fatal(err)
	}
	id := agent.WorkflowPermanentID
	if _, err := e.a.Agents.ApplyTags(ctx, id, &client.TagApplyRequest{Tags: []client.TagInput{{Key: "env", Value: "prod"}}}); err != nil {
		t.Fatal(err)
	}
	checks := map[string]error{}
	_, checks["apply"] = e.b.Agents.ApplyTags(ctx, id, &client.TagApplyRequest{Tags: []client.TagInput{{Value: "x"}}})
	_, checks["get"] = e.b.Agents.GetTags(ctx, id)
	_, checks["delete"] = e.b.Agents.DeleteTag(ctx, id, "env")
	_, checks["history"] = e.b.Agents.TagHistory(ctx, id, nil)
	_, checks["update key"] = e.b.Tags.UpdateKey(ctx, "env", "x")
	_, checks["delete key"] = e.b.Tags.DeleteKey(ctx, "env")
	_, checks["recolour"] = e.b.Tags.UpdateValue(ctx, "env", "prod", client.TagColorRed)
	_, checks["delete value"] = e.b.Tags.DeleteValue(ctx, "env", "prod")
	_, checks["rename value"] = e.b.Tags.RenameValue(ctx, "env", "prod", "p")
	for name, err := range checks {
		if !errors.Is(err, client.ErrNotFound) {
			t.Errorf("%s across organizations: %v, want 404", name, err)
		}
	}
	if keys, _ := e.b.Tags.ListKeys(ctx); len(keys) != 0 {
		t.Errorf("B sees A's keys %s", mustMarshal(keys))
	}
	if values, _ := e.b.Tags.ListValues(ctx, ""); len(values) != 0 {
		t.Errorf("B sees A's values %s", mustMarshal(values))
	}
	if batch, _ := e.b.Agents.BatchGetTags(ctx, []string{id}); len(batch[id]) != 0 {
		t.Errorf("B's batch read shows A's tags %s", mustMarshal(batch))
	}
	// B's registry is its own: the same pair can exist in both.
	if _, err := e.b.Tags.CreateValue(ctx, &client.TagValueCreateRequest{Key: "env", Value: "prod"}); err != nil {
		t.Errorf("B registering a pair A has: %v", err)
	}
	if got, _ := e.a.Agents.GetTags(ctx, id); !slices.Equal(tagList(got.Tags), []string{"env:prod"}) {
		t.Errorf("A's tags after B's attempts: %v", tagList(got.Tags))
	}
	if _, err := e.b.Runs.GetTags(ctx, "wr_1"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("run tags: %v", err)
	}
	if batch, err := e.b.Runs.BatchGetTags(ctx, []string{"wr_1"}); err != nil || batch["wr_1"] == nil {
		t.Errorf("run batch %s, %v", mustMarshal(batch), err)
	}
}
