package completion

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestKinds(t *testing.T) {
	get := &cobra.Command{Use: "get"}
	get.AddCommand(
		&cobra.Command{Use: "agents", Aliases: []string{"agent"}, Short: "List agents", Run: func(*cobra.Command, []string) {}},
		&cobra.Command{Use: "runs", Aliases: []string{"run"}, Short: "List runs", Run: func(*cobra.Command, []string) {}},
	)
	got, dir := Kinds(get, nil, "a")
	if strings.Join(got, "|") != "agent\tList agents" || dir != cobra.ShellCompDirectiveNoFileComp {
		t.Errorf("Kinds(a) = %q, %v", got, dir)
	}
	if got, _ := Kinds(get, []string{"agents"}, ""); len(got) != 0 {
		t.Errorf("after the kind: %q", got)
	}
}

func TestFirstAndWithout(t *testing.T) {
	fn := First(func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"x"}, cobra.ShellCompDirectiveNoFileComp
	})
	if got, _ := fn(nil, nil, ""); len(got) != 1 {
		t.Errorf("first argument: %q", got)
	}
	if got, _ := fn(nil, []string{"x"}, ""); len(got) != 0 {
		t.Errorf("second argument: %q", got)
	}
	if got := without([]string{"a\tA", "b\tB", "c"}, []string{"b", "c"}); strings.Join(got, ",") != "a\tA" {
		t.Errorf("without: %q", got)
	}
}

// TestBashScript: the script calls its own helpers, which stand in for
// bash-completion's when that is not loaded.
func TestBashScript(t *testing.T) {
	root := &cobra.Command{Use: "abctl"}
	root.AddCommand(NewCmdCompletion(), &cobra.Command{Use: "get", Run: func(*cobra.Command, []string) {}})
	script, err := BashScript(root, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"__abctl_get_comp_words_by_ref()", "__abctl_filedir()", `__abctl_get_comp_words_by_ref "$@" cur prev words cword`} {
		if !strings.Contains(script, want) {
			t.Errorf("the script lacks %q", want)
		}
	}
	// bash-completion's own helpers are called only from abctl's, when
	// they are defined.
	calls := map[string]int{}
	for line := range strings.Lines(script) {
		for _, helper := range []string{"_filedir", "_get_comp_words_by_ref"} {
			if strings.HasPrefix(strings.TrimSpace(line), helper+" ") {
				calls[helper]++
			}
		}
	}
	if calls["_filedir"] != 1 || calls["_get_comp_words_by_ref"] != 1 {
		t.Errorf("calls of bash-completion's helpers: %v, want one each (from abctl's)", calls)
	}
	if !strings.HasPrefix(script, "# bash completion V2 for abctl") {
		t.Errorf("the script's first line moved: %q", strings.SplitN(script, "\n", 2)[0])
	}
	var shells []string
	for _, c := range NewCmdCompletion().Commands() {
		shells = append(shells, c.Name())
	}
	if strings.Join(shells, ",") != "bash,fish,powershell,zsh" {
		t.Errorf("shells %q", shells)
	}
}
