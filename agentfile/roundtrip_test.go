package agentfile_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
)

func loadTestAgents(t *testing.T) []*agentfile.Agent {
	t.Helper()
	agents, err := agentfile.Load([]string{"testdata/agents", "testdata/hosted/defaults.yaml"}, agentfile.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return agents
}

// TestNormalizeIsStable: the normalized form of each test agent, loaded
// as a file, normalizes to itself; and it says what the file says.
func TestNormalizeIsStable(t *testing.T) {
	for _, a := range loadTestAgents(t) {
		t.Run(a.Name, func(t *testing.T) {
			first := mustNormalize(t, a.Definition)
			again, err := agentfile.Parse("normalized.yaml", first)
			if err != nil {
				t.Fatalf("the normalized form does not load: %v\n%s", err, first)
			}
			checkSame(t, "normalized twice", first, mustNormalize(t, again[0].Definition))
			if !strings.HasPrefix(string(first), "title: ") || !strings.Contains(string(first), "\nworkflow_definition:\n") {
				t.Errorf("normalized form:\n%s", first)
			}
		})
	}
}

// TestEveryBlockType: the test agents use every block type of the client,
// so that the round trips above and against the daemon cover them all.
func TestEveryBlockType(t *testing.T) {
	used := map[client.BlockType]bool{}
	var walk func(client.Blocks)
	walk = func(bs client.Blocks) {
		for _, b := range bs {
			used[b.BlockType()] = true
			switch x := b.(type) {
			case *client.ForLoopBlock:
				walk(x.LoopBlocks)
			case *client.WhileLoopBlock:
				walk(x.LoopBlocks)
			}
		}
	}
	for _, a := range loadTestAgents(t) {
		walk(a.Definition.WorkflowDefinition.Blocks)
	}
	for _, bt := range client.BlockTypes {
		if !used[bt] {
			t.Errorf("no test agent has a %s block", bt)
		}
	}
}

func hostedResponse(t *testing.T) *client.Agent {
	t.Helper()
	raw, err := os.ReadFile("testdata/hosted/defaults.response.json")
	if err != nil {
		t.Fatal(err)
	}
	a := new(client.Agent)
	if err := json.Unmarshal(raw, a); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestNormalizeHostedResponse: the hosted service echoes every default,
// derived value and normalized URL of a definition (its answer to
// testdata/hosted/defaults.yaml is defaults.response.json); none of that
// is a difference.
func TestNormalizeHostedResponse(t *testing.T) {
	data, err := os.ReadFile("testdata/hosted/defaults.yaml")
	if err != nil {
		t.Fatal(err)
	}
	agents, err := agentfile.Parse("testdata/hosted/defaults.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	hosted := hostedResponse(t)
	checkSame(t, "hosted", mustNormalize(t, agents[0].Definition), mustNormalizeAgent(t, hosted))
	checkRender(t, hosted, "defaults", map[string]string{"team": "qa", "tier": "2"})
}

func TestRenderLayout(t *testing.T) {
	hosted := hostedResponse(t)
	y, err := agentfile.Render(hosted, "defaults", map[string]string{"tier": "2", "team": "qa"}, "yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The agent's id is not the one "defaults" maps to: the file keeps it.
	if !strings.HasPrefix(string(y), "name: defaults\nid: wpid_490440779503357900\ntags:\n  team: qa\n  tier: \"2\"\ntitle: Defaults\n") {
		t.Errorf("YAML file starts:\n%s", y[:min(len(y), 200)])
	}
	j, err := agentfile.Render(hosted, "", nil, "json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(j), "{\n  \"id\": \"wpid_490440779503357900\",\n  \"title\": \"Defaults\",\n") || !json.Valid(j) {
		t.Errorf("JSON file starts:\n%s", j[:min(len(j), 200)])
	}
	d, err := agentfile.RenderDefinition(hosted, "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(d), "title: Defaults\n") || strings.Contains(string(d), "\nid: ") || strings.HasPrefix(string(d), "id:") {
		t.Errorf("RenderDefinition starts:\n%s", d[:min(len(d), 200)])
	}
	if _, err := agentfile.Render(hosted, "Not Valid", nil, "yaml"); err == nil {
		t.Error("Render accepted an invalid name")
	}
	if _, err := agentfile.Render(hosted, "x", nil, "toml"); err == nil {
		t.Error("Render accepted an unknown format")
	}
}

// TestNormalizeSameAndDifferent: pairs of definitions the service treats
// as the same normalize to the same bytes; pairs it treats differently do
// not.
func TestNormalizeSameAndDifferent(t *testing.T) {
	const base = `title: T
workflow_definition:
  parameters:
    - key: p
      parameter_type: workflow
      workflow_parameter_type: json
      %s
  blocks:
    - label: b
      block_type: extraction
      data_extraction_goal: Read
      %s
`
	def := func(param, block string) []byte {
		t.Helper()
		text := strings.Replace(strings.Replace(base, "%s", param, 1), "%s", block, 1)
		agents, err := agentfile.Parse("t.yaml", []byte(text))
		if err != nil {
			t.Fatalf("%v\n%s", err, text)
		}
		return mustNormalize(t, agents[0].Definition)
	}
	cases := []struct {
		name           string
		param1, block1 string
		param2, block2 string
		same           bool
	}{
		{"user data key order", "default_value: {a: 1, b: [x, y]}", "", "default_value: {b: [x, y], a: 1}", "", true},
		{"number spellings", "default_value: 1.0", "", "default_value: 1", "", true},
		{"float spellings", "default_value: 0.00001", "", "default_value: 1e-05", "", true},
		{"explicit defaults", "description: null", "engine: skyvern-1.0", "description: ''", "max_retries: 0", true},
		{"empty lists", "", "parameter_keys: []", "", "", true},
		{"block url normalized", "", "url: example.com", "", "url: https://example.com/", true},
		{"templated url kept", "", "url: '{{ p }}'", "", "url: 'https://{{ p }}'", false},
		{"goal", "", "url: a.example", "", "url: b.example", false},
		{"default value empty string", "default_value: ''", "", "", "", false},
		{"default value null inside", "default_value: [null]", "", "default_value: []", "", false},
		{"non-default engine", "", "engine: skyvern-2.0", "", "", false},
		{"schema differs", "", "data_schema: {type: object}", "", "data_schema: {type: array}", false},
	}
	for _, c := range cases {
		a, b := def(c.param1, c.block1), def(c.param2, c.block2)
		if (string(a) == string(b)) != c.same {
			t.Errorf("%s: same=%v, want %v:\n%s", c.name, !c.same, c.same, agentfile.Diff("1", "2", a, b))
		}
	}

	agentLevel := func(extra string) []byte {
		t.Helper()
		agents, err := agentfile.Parse("t.yaml", []byte("title: T\n"+extra+"\nworkflow_definition: {blocks: []}\n"))
		if err != nil {
			t.Fatal(err)
		}
		return mustNormalize(t, agents[0].Definition)
	}
	same := [][2]string{
		{"status: published", ""},
		{"ai_fallback: true", ""},
		{"cache_key: default", ""},
		{"run_with: agent", ""},
		{"mask_secrets: false", ""},
		{"webhook_callback_url: hooks.example.com", "webhook_callback_url: https://hooks.example.com/"},
		{"cdp_connect_headers: {Authorization: secret}", "cdp_connect_headers: {Authorization: '***'}"},
	}
	for _, p := range same {
		if a, b := agentLevel(p[0]), agentLevel(p[1]); string(a) != string(b) {
			t.Errorf("%q and %q differ:\n%s", p[0], p[1], agentfile.Diff("1", "2", a, b))
		}
	}
	different := [][2]string{
		{"ai_fallback: false", ""},
		{"cache_key: ''", ""},
		{"status: draft", ""},
		{"mask_secrets: true", ""},
		{"cdp_connect_headers: {Authorization: secret}", ""},
	}
	for _, p := range different {
		if a, b := agentLevel(p[0]), agentLevel(p[1]); string(a) == string(b) {
			t.Errorf("%q and %q normalize the same:\n%s", p[0], p[1], a)
		}
	}
	if !slices.Equal(agentLevel(""), agentLevel("")) {
		t.Error("Normalize is not deterministic")
	}
	// The service computes the definition's version from its blocks.
	versioned, err := agentfile.Parse("t.yaml", []byte("title: T\nworkflow_definition: {version: 1, blocks: []}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := mustNormalize(t, versioned[0].Definition), agentLevel(""); string(a) != string(b) {
		t.Errorf("an explicit version makes a difference:\n%s", agentfile.Diff("1", "2", a, b))
	}
}
