package engine_test

// The types of a recorded extraction's fields: from the data schema where
// it says what a value is, else from how the values are written. A price
// recorded from whole values must replay a price with cents.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/abctl/abctl/agentfile/script"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

// pricePages serves /prices?q=..., a list of products whose prices are
// written as prices maps them (name to the price's text).
func pricePages(t *testing.T, prices map[string][][2]string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		for _, p := range prices[r.URL.Query().Get("q")] {
			fmt.Fprintf(&b, `<li><h3>%s</h3><span class="price">%s</span></li>`, p[0], p[1])
		}
		fmt.Fprintf(w, `<!doctype html><title>Prices</title><ul id="products">%s</ul>`, b.String())
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestScriptFieldTypes(t *testing.T) {
	needBrowser(t)
	for _, tc := range []struct {
		name string
		// schema is the extraction block's data_schema (nil for none).
		schema json.RawMessage
		// recorded are the prices on the page the first run records from.
		recorded [2]string
	}{
		// The values are whole, the schema says number.
		{name: "from the schema", recorded: [2]string{"$149", "$219"},
			schema: json.RawMessage(`{"type":"object","properties":{"products":{"type":"array","items":{"$ref":"#/$defs/product"}}},
				"$defs":{"product":{"type":"object","properties":{"name":{"type":"string"},"price":{"type":["number","null"]}}}}}`)},
		// No schema: the page writes the whole values with cents.
		{name: "from the page", recorded: [2]string{"$149.00", "$219.00"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := pricePages(t, map[string][][2]string{
				"bikes": {{"Road Bike", tc.recorded[0]}, {"Gravel Bike", tc.recorded[1]}},
				"bells": {{"Brass Bell", "$24.50"}, {"Steel Bell", "$9.00"}},
			})
			first := map[string]any{"products": []any{
				map[string]any{"name": "Road Bike", "price": 149.0}, map[string]any{"name": "Gravel Bike", "price": 219.0}}}
			srv := llmtest.New(t, llmtest.Step{Kind: llm.KindExtract, Match: `Road Bike`, Reply: llmtest.JSON(first)})
			c, _ := startDaemon(t, modelEngine(t, srv, engine.Config{}))
			ag, err := c.Agents.Create(t.Context(), &client.AgentDefinition{Title: "Prices", WorkflowDefinition: client.WorkflowDefinition{
				Parameters: []client.Parameter{stringParam("site"), stringParam("query")},
				Blocks: client.Blocks{
					&client.GotoURLBlock{BlockBase: base("open"), URL: "{{ site }}/prices?q={{ query }}"},
					&client.ExtractionBlock{BlockBase: base("products"), DataExtractionGoal: "The products with their prices.", DataSchema: tc.schema},
				},
			}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			run := func(query string) *client.Run {
				t.Helper()
				done := runToEnd(t, c, &client.AgentRunRequest{AgentID: ag.WorkflowPermanentID, RunWith: "code",
					Parameters: map[string]any{"site": site.URL, "query": query}})
				if done.Status != client.RunStatusCompleted {
					t.Fatalf("run %s: %s: %s", done.RunID, done.Status, done.GetFailureReason())
				}
				return done
			}
			recordedRun := run("bikes")
			sr := recordedRun.ScriptRun
			if sr == nil || sr.ScriptID == nil {
				t.Fatalf("script_run %+v", sr)
			}
			file, err := c.Scripts.File(t.Context(), *sr.ScriptID, 0)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := script.Parse(file)
			if err != nil {
				t.Fatal(err)
			}
			b := sc.Block("products")
			if b == nil || b.Extract == nil {
				t.Fatalf("no recorded extraction:\n%s", file)
			}
			for _, f := range b.Extract.Fields {
				if strings.HasSuffix(f.Path, ".price") && f.Type != script.TypeNumber {
					t.Errorf("%s is recorded as %s, want number:\n%s", f.Path, f.Type, file)
				}
			}

			// Another query, a price with cents: read without the model.
			calls := len(srv.Calls())
			other := run("bells")
			if n := len(srv.Calls()) - calls; n != 0 {
				t.Errorf("the replay made %d model calls, want none", n)
			}
			if other.ScriptRun == nil || other.ScriptRun.AIFallbackTriggered {
				t.Errorf("the replay fell back to the model: %+v", other.ScriptRun)
			}
			var out map[string]any
			if err := json.Unmarshal(other.Output, &out); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"products": []any{
				map[string]any{"name": "Brass Bell", "price": 24.5}, map[string]any{"name": "Steel Bell", "price": 9.0}}}
			if got := out["products_output"]; !jsonSame(got, want) {
				t.Errorf("the replay's output %v, want %v", got, want)
			}
		})
	}
}
