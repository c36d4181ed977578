package get

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
)

// exec runs `abctl get KIND args...` through the group, so that aliases
// (get agent, get run) are checked too, with runF given to the leaf made
// by leaf.
func exec(t *testing.T, leaf func(*cobra.Command) *cobra.Command, args ...string) error {
	t.Helper()
	root := &cobra.Command{Use: "get"}
	root.AddCommand(leaf(root))
	return cmdtest.Exec(root, args...)
}

func agents(t *testing.T, args ...string) (*AgentsOptions, error) {
	t.Helper()
	f, _ := cmdtest.NewFactory(t, nil)
	var got *AgentsOptions
	err := exec(t, func(*cobra.Command) *cobra.Command {
		return NewCmdAgents(f, func(o *AgentsOptions) error { got = o; return nil })
	}, args...)
	return got, err
}

func runs(t *testing.T, args ...string) (*RunsOptions, error) {
	t.Helper()
	f, _ := cmdtest.NewFactory(t, nil)
	var got *RunsOptions
	err := exec(t, func(*cobra.Command) *cobra.Command {
		return NewCmdRuns(f, func(o *RunsOptions) error { got = o; return nil })
	}, args...)
	return got, err
}

func TestAgentsFlags(t *testing.T) {
	o, err := agents(t, "agents", "--search", "form", "--folder", "folder/fld_1", "--tag", "env:prod", "--tag", "web",
		"--status", "draft", "--limit", "20", "-o", "wide")
	if err != nil {
		t.Fatal(err)
	}
	if o.Search != "form" || o.Folder != "fld_1" || strings.Join(o.Tags, ",") != "env:prod,web" || strings.Join(o.Status, ",") != "draft" ||
		o.Limit != 20 || o.Format != printer.Wide || len(o.Refs) != 0 {
		t.Errorf("list options: %+v", o)
	}
	o, err = agents(t, "agent", "contact-form", "agent/other", "--version", "2", "-o", "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(o.Refs, ",") != "contact-form,agent/other" || o.Version != 2 || o.Format != printer.YAML {
		t.Errorf("show options: %+v", o)
	}
	if o, err := agents(t, "agents"); err != nil || o.Format != printer.Table || o.Limit != 0 {
		t.Errorf("defaults: %+v %v", o, err)
	}
}

func TestAgentsUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"agent", "x", "-o", "bogus"}, `-o "bogus" is not a format of "get agents"; use one of: table, wide, json, yaml, name`},
		{[]string{"agents", "--limit", "-1"}, "--limit must be 0 (all) or more, not -1"},
		{[]string{"agents", "--version", "2"}, "--version needs an agent name or id"},
		{[]string{"agents", "--folder", "run/wr_1"}, `"run/wr_1" names a run, not a folder`},
		{[]string{"agents", "--limit", "ten"}, "invalid argument"},
	} {
		o, err := agents(t, tc.args...)
		if o != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("get %q: %v, want the usage error %q", tc.args, err, tc.want)
		}
	}
}

func TestRunsFlags(t *testing.T) {
	o, err := runs(t, "runs", "--status", "failed", "--status", "running", "--type", "task_v2", "--agent", "form",
		"--search", "abc", "--tag", "env:prod", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(o.Status, ",") != "failed,running" || strings.Join(o.Types, ",") != "task_v2" || o.Agent != "form" ||
		o.Search != "abc" || strings.Join(o.Tags, ",") != "env:prod" || o.Limit != 50 || o.Format != printer.JSON {
		t.Errorf("list options: %+v", o)
	}
	o, err = runs(t, "run", "run/wr_1", "--steps", "-o", "wide")
	if err != nil || strings.Join(o.RunIDs, ",") != "wr_1" || !o.Steps || o.Format != printer.Wide {
		t.Errorf("steps options: %+v %v", o, err)
	}
}

func TestRunsUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"runs", "-o", "table-ish"}, `-o "table-ish" is not a format`},
		{[]string{"runs", "--limit", "-5"}, "--limit must be 0 (all) or more"},
		{[]string{"runs", "--search", "ab"}, "--search needs at least 3 characters"},
		{[]string{"runs", "--steps"}, "--steps needs one run id"},
		{[]string{"runs", "wr_1", "wr_2", "--steps"}, "--steps needs one run id"},
		{[]string{"runs", "agent/x"}, `"agent/x" names an agent, not a run`},
	} {
		o, err := runs(t, tc.args...)
		if o != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("get %q: %v, want the usage error %q", tc.args, err, tc.want)
		}
	}
}

func TestFoldersAndTags(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var fo *FoldersOptions
	err := exec(t, func(*cobra.Command) *cobra.Command {
		return NewCmdFolders(f, func(o *FoldersOptions) error { fo = o; return nil })
	}, "folder", "folder/fld_1", "fld_2", "--search", "bill", "-o", "name")
	if err != nil || strings.Join(fo.FolderIDs, ",") != "fld_1,fld_2" || fo.Search != "bill" || fo.Format != printer.Name {
		t.Errorf("folders: %+v %v", fo, err)
	}
	fo = nil
	err = exec(t, func(*cobra.Command) *cobra.Command {
		return NewCmdFolders(f, func(o *FoldersOptions) error { fo = o; return nil })
	}, "folders", "agent/x")
	if fo != nil || !cmdtest.IsUsage(err) {
		t.Errorf("a folder named by an agent: %v", err)
	}

	var to *TagsOptions
	err = exec(t, func(*cobra.Command) *cobra.Command {
		return NewCmdTags(f, func(o *TagsOptions) error { to = o; return nil })
	}, "tag", "env", "-o", "yaml")
	if err != nil || to.Key != "env" || to.Format != printer.YAML {
		t.Errorf("tags: %+v %v", to, err)
	}
	if err := exec(t, func(*cobra.Command) *cobra.Command { return NewCmdTags(f, nil) }, "tags", "a", "b"); err == nil {
		t.Error("two keys were accepted")
	}
}

// TestGroup: get has the four kinds, each also by its singular name.
func TestGroup(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	cmd := NewCmdGet(f)
	for _, name := range []string{"agents", "agent", "runs", "run", "folders", "folder", "tags", "tag"} {
		if c, _, err := cmd.Find([]string{name}); err != nil || c == cmd {
			t.Errorf("get %s: %v", name, err)
		}
	}
	if err := cmdtest.Exec(cmd, "frobnicate"); !cmdtest.IsUsage(err) {
		t.Errorf("get frobnicate: %v", err)
	}
}

// TestPrintAgents: the table names agents by the name they were applied
// under, or their id, and -o yaml writes agent files with their tags,
// warning about those a file cannot hold.
func TestPrintAgents(t *testing.T) {
	f, s := cmdtest.NewFactory(t, nil)
	key := func(k string) *string { return &k }
	a := &client.Agent{WorkflowPermanentID: "wpid_1", Title: "Contact form", Version: 3, Status: client.AgentStatusPublished,
		WorkflowDefinition: client.WorkflowDefinition{Blocks: client.Blocks{&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}, URL: "https://example.com/"}}}}
	b := &client.Agent{WorkflowPermanentID: "wpid_2", Title: "Made elsewhere", Version: 1}
	tags := map[string][]client.TagItem{
		"wpid_1": {{Key: key("abctl.name"), Value: "contact-form"}, {Key: key("env"), Value: "prod"}, {Value: "urgent"}},
	}
	opts := &AgentsOptions{IO: f.IO, Now: f.Now, Format: printer.Name}
	if err := printAgents(opts, []*client.Agent{a, b}, tags, false); err != nil {
		t.Fatal(err)
	}
	if s.Out.String() != "agent/contact-form\nagent/wpid_2\n" {
		t.Errorf("-o name: %q", s.Out.String())
	}
	s.Out.Reset()
	opts.Format = printer.YAML
	if err := printAgents(opts, []*client.Agent{a}, tags, true); err != nil {
		t.Fatal(err)
	}
	if y := s.Out.String(); !strings.HasPrefix(y, "name: contact-form\n") || !strings.Contains(y, "env: prod") || strings.Contains(y, "abctl.name") {
		t.Errorf("-o yaml:\n%s", y)
	}
	if !strings.Contains(s.ErrOut.String(), `agent/contact-form: label "urgent" is not in the file`) {
		t.Errorf("stderr: %q", s.ErrOut.String())
	}
}
