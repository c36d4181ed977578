package applier

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
)

const scheduledAgent = `title: Nightly report
schedules:
  - name: nightly
    cron: "30 2 * * *"
    timezone: America/New_York
    parameters: {site: "https://example.com"}
  - name: weekly
    cron: "@weekly"
    timezone: UTC
    enabled: false
    parameters: {site: "https://example.org"}
workflow_definition:
  parameters:
    - {key: site, parameter_type: workflow, workflow_parameter_type: string}
  blocks:
    - {block_type: goto_url, label: open, url: "{{site}}/report.html"}
`

// scheduleSummary is each of the agent's schedules as name=cron@zone,
// sorted.
func scheduleSummary(t *testing.T, c *client.Client, id string) []string {
	t.Helper()
	list, err := c.Schedules.List(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range list {
		name := "(unnamed)"
		if s.Name != nil {
			name = *s.Name
		}
		on := ""
		if !s.Enabled {
			on = " off"
		}
		out = append(out, name+"="+s.CronExpression+"@"+s.Timezone+on)
	}
	slices.Sort(out)
	return out
}

// TestSchedulesInAgentFiles: a file's schedules are created with its
// agent, unchanged when applied again, and changed, added and removed to
// match the file; Plan shows them; a file without the key leaves them.
func TestSchedulesInAgentFiles(t *testing.T) {
	s := startService(t, nil)
	ctx := t.Context()
	fa := parseAgent(t, "agents/report.yaml", scheduledAgent)
	if !fa.HasSchedules || len(fa.Schedules) != 2 {
		t.Fatalf("parsed schedules: %+v", fa.Schedules)
	}
	ap := s.newApplier()
	_, _, want, err := ap.Plan(ctx, fa)
	if err != nil || !strings.Contains(string(want), `# schedule nightly: "30 2 * * *" in America/New_York, enabled, parameters {"site":"https://example.com"}`) {
		t.Fatalf("plan of a new agent: %v\n%s", err, want)
	}
	res := ap.Apply(ctx, fa, false)
	if res.Err != nil || res.Action != Created {
		t.Fatalf("apply: %+v", res)
	}
	id := res.ID
	if got := scheduleSummary(t, s.plain, id); !slices.Equal(got, []string{"nightly=30 2 * * *@America/New_York", "weekly=@weekly@UTC off"}) {
		t.Errorf("schedules after the first apply: %v", got)
	}
	if res := s.newApplier().Apply(ctx, fa, false); res.Err != nil || res.Action != Unchanged {
		t.Errorf("the same file again: %+v", res)
	}

	// A schedule made by hand is not the file's: the next apply removes it.
	if _, err := s.plain.Schedules.Create(ctx, id, &client.ScheduleRequest{CronExpression: "@hourly", Timezone: "UTC",
		Parameters: map[string]any{"site": "x"}, Name: client.Ptr("by-hand")}); err != nil {
		t.Fatal(err)
	}
	changed := parseAgent(t, "agents/report.yaml", strings.Replace(strings.Replace(scheduledAgent, `"30 2 * * *"`, `"0 3 * * *"`, 1),
		"  - name: weekly", "  - name: monthly\n    cron: \"@monthly\"\n    timezone: Europe/Berlin\n    parameters: {site: \"https://example.net\"}\n  - name: weekly", 1))
	action, have, want, err := s.newApplier().Plan(ctx, changed)
	if err != nil || action != Configured {
		t.Fatalf("plan of the change: %s %v", action, err)
	}
	diff := agentfile.Diff("service", "file", have, want)
	for _, line := range []string{`-# schedule by-hand: "@hourly" in UTC`, `-# schedule nightly: "30 2 * * *"`, `+# schedule nightly: "0 3 * * *"`, `+# schedule monthly: "@monthly" in Europe/Berlin`} {
		if !strings.Contains(diff, line) {
			t.Errorf("the diff lacks %q:\n%s", line, diff)
		}
	}
	if res := s.newApplier().Apply(ctx, changed, false); res.Err != nil || res.Action != Configured {
		t.Fatalf("apply the change: %+v", res)
	}
	if got := scheduleSummary(t, s.plain, id); !slices.Equal(got, []string{"monthly=@monthly@Europe/Berlin", "nightly=0 3 * * *@America/New_York", "weekly=@weekly@UTC off"}) {
		t.Errorf("schedules after the change: %v", got)
	}

	// Without the key, the agent's schedules are left alone.
	without := parseAgent(t, "agents/report.yaml", scheduledAgent[:strings.Index(scheduledAgent, "schedules:")]+scheduledAgent[strings.Index(scheduledAgent, "workflow_definition:"):])
	if without.HasSchedules {
		t.Fatal("a file without schedules has them")
	}
	if res := s.newApplier().Apply(ctx, without, false); res.Err != nil || res.Action != Unchanged {
		t.Errorf("apply without schedules: %+v", res)
	}
	if got := scheduleSummary(t, s.plain, id); len(got) != 3 {
		t.Errorf("schedules after a file without the key: %v", got)
	}
	// An empty list removes them all.
	empty := parseAgent(t, "agents/report.yaml", scheduledAgent[:strings.Index(scheduledAgent, "schedules:")]+
		"schedules: []\n"+scheduledAgent[strings.Index(scheduledAgent, "workflow_definition:"):])
	if res := s.newApplier().Apply(ctx, empty, false); res.Err != nil || res.Action != Configured {
		t.Errorf("apply an empty list: %+v", res)
	}
	if got := scheduleSummary(t, s.plain, id); len(got) != 0 {
		t.Errorf("schedules after an empty list: %v", got)
	}
}

func TestScheduleProblemsInAgentFiles(t *testing.T) {
	for _, tc := range []struct{ schedules, says string }{
		{"schedules: {nightly: x}", "a list of schedules"},
		{"schedules:\n  - {cron: '@daily', timezone: UTC}", "needs a name"},
		{"schedules:\n  - {name: a, timezone: UTC}", "needs a cron expression"},
		{"schedules:\n  - {name: a, cron: '@daily'}", "needs a timezone"},
		{"schedules:\n  - {name: a, cron: '@daily', timezone: UTC}\n  - {name: a, cron: '@hourly', timezone: UTC}", "two schedules are named"},
		{"schedules:\n  - {name: a, cron: '@daily', timezone: UTC, every: day}", "no key \"every\""},
		{"schedules:\n  - {name: a, cron: '@daily', timezone: UTC, enabled: yes please}", "true or false"},
	} {
		_, err := agentfile.Parse("a.yaml", []byte("title: T\n"+tc.schedules+"\nworkflow_definition:\n  parameters: []\n  blocks:\n    - {block_type: wait, label: pause, wait_sec: 1}\n"))
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want %q", tc.schedules, err, tc.says)
		}
	}
}

// TestTheScheduledAgentOfTheDocsParses: the agent file docs/schedules.md
// shows is a valid one.
func TestTheScheduledAgentOfTheDocsParses(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "schedules.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "```yaml\n")
	if start < 0 {
		t.Fatal("docs/schedules.md shows no YAML")
	}
	text = text[start+len("```yaml\n"):]
	text = text[:strings.Index(text, "```")]
	fa := parseAgent(t, "agents/nightly-report.yaml", text)
	if len(fa.Schedules) != 2 || fa.Schedules[1].Enabled || fa.Schedules[0].Parameters["site"] != "https://example.com" {
		t.Errorf("the docs' schedules: %+v", fa.Schedules)
	}
}
