package blocks

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/abctl/abctl/agentfile/script"
	"github.com/abctl/abctl/client"
)

func TestCheck(t *testing.T) {
	nav := &client.NavigationBlock{BlockBase: client.BlockBase{Label: "find"}, NavigationGoal: "Find it"}
	for _, tc := range []struct {
		def      client.WorkflowDefinition
		hasModel bool
		want     string
	}{
		{def: client.WorkflowDefinition{Blocks: client.Blocks{nav}}, hasModel: true},
		{def: client.WorkflowDefinition{Blocks: client.Blocks{nav}}, want: `block "find" (navigation) needs a language model`},
		{def: client.WorkflowDefinition{Blocks: client.Blocks{&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}}}}, want: `block "open" (goto_url) has no url`},
		{def: client.WorkflowDefinition{FinallyBlockLabel: "last", Blocks: client.Blocks{nav}}, hasModel: true, want: `finally_block_label "last" names no top-level block`},
		{def: client.WorkflowDefinition{Blocks: client.Blocks{&client.ForLoopBlock{BlockBase: client.BlockBase{Label: "each"}, LoopOverParameterKey: "items",
			LoopBlocks: client.Blocks{nav}}}}, want: `block "find" (navigation) needs a language model`},
		{def: client.WorkflowDefinition{Blocks: client.Blocks{&client.GoogleSheetsReadBlock{BlockBase: client.BlockBase{Label: "sheet"}}}}, hasModel: true,
			want: `block "sheet" (google_sheets_read) has no spreadsheet_url`},
		{def: client.WorkflowDefinition{Blocks: client.Blocks{&client.GoogleSheetsReadBlock{BlockBase: client.BlockBase{Label: "sheet"},
			SpreadsheetURL: "https://docs.google.com/spreadsheets/d/abc123/edit"}}}, want: `block "sheet" (google_sheets_read) has no credential_id: this daemon signs in to Google as a service account`},
		{def: client.WorkflowDefinition{Blocks: client.Blocks{&client.GoogleSheetsWriteBlock{BlockBase: client.BlockBase{Label: "sheet"},
			SpreadsheetURL: "https://example.com/not-a-sheet", CredentialID: "cred_1", Values: "[]"}}}, want: `is neither a spreadsheet's address`},
		{def: client.WorkflowDefinition{Blocks: client.Blocks{&client.GoogleSheetsWriteBlock{BlockBase: client.BlockBase{Label: "sheet"},
			SpreadsheetURL: "abc123", CredentialID: "cred_1", Values: "[]", WriteMode: "replace"}}}, want: `write_mode "replace" is not append or update`},
	} {
		err := Check(&tc.def, tc.hasModel)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.def, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: error %v, want %q", tc.def, err, tc.want)
		}
	}
}

func TestAsList(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want []any
	}{
		{nil, nil},
		{[]any{1.0, "a"}, []any{1.0, "a"}},
		{`["x","y"]`, []any{"x", "y"}},
		{json.RawMessage(`[1,2]`), []any{1.0, 2.0}},
		{"one", []any{"one"}},
		{" ", nil},
		{map[string]any{"k": 1.0}, []any{map[string]any{"k": 1.0}}},
	} {
		if got := asList(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("asList(%#v) = %#v, want %#v", tc.in, got, tc.want)
		}
	}
}

func TestMergeCodes(t *testing.T) {
	got := mergeCodes(map[string]string{"a": "block"}, map[string]string{"a": "def", "b": "def"})
	if want := map[string]string{"a": "block", "b": "def"}; !reflect.DeepEqual(got, want) {
		t.Errorf("mergeCodes = %v", got)
	}
}

// TestLabelReferences: templates read a block by its label, as the hosted
// service registers them: {{ label.output }} once it has an output, and a
// running loop's {{ label.current_value }}, current_index and
// current_item; a name nothing defines fails with a reason that names it.
func TestLabelReferences(t *testing.T) {
	def := &client.WorkflowDefinition{Blocks: client.Blocks{
		&client.HTTPRequestBlock{BlockBase: client.BlockBase{Label: "get_data"}},
		&client.ForLoopBlock{BlockBase: client.BlockBase{Label: "each_invoice"}, LoopBlocks: client.Blocks{
			&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}},
		}},
		&client.WaitBlock{BlockBase: client.BlockBase{Label: "site"}}, // a label a parameter also names
	}}
	in := &Interpreter{def: def, params: map[string]any{"site": "http://127.0.0.1:1"}, outputs: newOutputs(), labels: blockLabels(def.Blocks)}
	top := &scope{in: in}
	in.setOutput("get_data", map[string]any{"status_code": 200, "body": map[string]any{"id": "inv-7"}}, top)
	iter := top.loop("each_invoice", map[string]any{"current_value": "inv-7", "current_item": "inv-7", "current_index": 1})
	for tmplText, want := range map[string]string{
		"{{ get_data.output.status_code }}":                                 "200",
		"{{ get_data.output.body.id }}":                                     "inv-7",
		"{{ get_data_output.status_code }}":                                 "200",
		"{{ each_invoice.current_value }}/{{ each_invoice.current_index }}": "inv-7/1",
		"{{ each_invoice.current_item }}":                                   "inv-7",
		"{{ current_value }}":                                               "inv-7",
		"{{ site }}":                                                        "http://127.0.0.1:1",
	} {
		got, err := iter.render(tmplText)
		if err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", tmplText, got, err, want)
		}
	}
	// Outside the loop its label has no iteration.
	if _, err := top.render("{{ each_invoice.current_value }}"); err == nil {
		t.Error("{{ each_invoice.current_value }} outside the loop rendered")
	}
	// A block that has not run has no output yet.
	if _, err := top.render("{{ open.output }}"); err == nil || !strings.Contains(err.Error(), `"open" is not defined`) {
		t.Errorf("{{ open.output }} before open ran: %v", err)
	}
	// A url that is only a parameter's key is its value.
	for u, want := range map[string]string{"site": "http://127.0.0.1:1", " site ": "http://127.0.0.1:1", "{{ site }}/a": "http://127.0.0.1:1/a"} {
		if got, err := top.renderURL(u); err != nil || got != want {
			t.Errorf("url %q: %q, %v; want %q", u, got, err, want)
		}
	}
	_, err := iter.render("Invoices of {{ invoice_date }}")
	if err == nil || !strings.Contains(err.Error(), `"invoice_date" is not defined`) {
		t.Errorf("an undeclared name: %v, want an error naming it", err)
	}
}

// TestLoopSources: a for_loop reads its list from a parameter, a
// template (paths, indexes, filters) or a block's label; an object with
// one list field loops over that list, one with several is refused
// naming them.
func TestLoopSources(t *testing.T) {
	def := &client.WorkflowDefinition{Blocks: client.Blocks{
		&client.ExtractionBlock{BlockBase: client.BlockBase{Label: "get_links"}},
		&client.ExtractionBlock{BlockBase: client.BlockBase{Label: "get_two"}},
		&client.ExtractionBlock{BlockBase: client.BlockBase{Label: "not_run"}},
	}}
	in := &Interpreter{def: def, params: map[string]any{"companies": []any{"a", "b"}, "csv": `["x","y","z"]`},
		outputs: newOutputs(), labels: blockLabels(def.Blocks)}
	top := &scope{in: in}
	in.setOutput("get_links", json.RawMessage(`{"total":2,"links":["/1","/2"]}`), top)
	in.setOutput("get_two", map[string]any{"a": []any{1.0}, "b": []any{2.0}}, top)
	for _, tc := range []struct {
		name string
		b    client.ForLoopBlock
		want []any
	}{
		{"parameter key", client.ForLoopBlock{LoopOverParameterKey: "companies"}, []any{"a", "b"}},
		{"parameter holding JSON text", client.ForLoopBlock{LoopOverParameterKey: "csv"}, []any{"x", "y", "z"}},
		{"template path", client.ForLoopBlock{LoopVariableReference: "{{ get_links_output.links }}"}, []any{"/1", "/2"}},
		{"template index", client.ForLoopBlock{LoopVariableReference: "{{ get_links.output.links[1] }}"}, []any{"/2"}},
		{"block label, the object's one list", client.ForLoopBlock{LoopVariableReference: "get_links"}, []any{"/1", "/2"}},
		{"output key, the object's one list", client.ForLoopBlock{LoopOverParameterKey: "get_links_output"}, []any{"/1", "/2"}},
	} {
		got, err := top.loopValues(&tc.b)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %#v, %v; want %#v", tc.name, got, err, tc.want)
		}
	}
	for ref, want := range map[string]string{
		"get_two":            "several lists (a, b)",
		"not_run":            `block "not_run": it has no output`,
		"{{ nothing_here }}": `"nothing_here" is not defined`,
	} {
		_, err := top.loopValues(&client.ForLoopBlock{LoopVariableReference: ref})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("loop over %s: %v, want an error with %q", ref, err, want)
		}
	}
}

func TestRecordedScriptKeepsOnlyTheAgentsBlocks(t *testing.T) {
	old := &script.Script{Format: script.Format, Blocks: []script.Block{
		{Label: "search", Mode: script.ModeReplay}, {Label: "renamed_since", Mode: script.ModeReplay}, {Label: "other_branch", Mode: script.ModeModel, Reason: "x"}}}
	s := &Scripts{Replay: old, Record: true}
	// As New gives them.
	s.labels = blockLabels(client.Blocks{
		&client.NavigationBlock{BlockBase: client.BlockBase{Label: "search"}},
		&client.ValidationBlock{BlockBase: client.BlockBase{Label: "other_branch"}},
	})
	s.keep(script.Block{Label: "search", Mode: script.ModeReplay, Steps: []script.Step{{Action: "wait", Value: "1"}}})
	got := s.Recorded()
	var labels []string
	for _, b := range got.Blocks {
		labels = append(labels, b.Label)
	}
	if strings.Join(labels, ",") != "search,other_branch" || len(got.Blocks[0].Steps) != 1 {
		t.Errorf("recorded %+v", got.Blocks)
	}
}
