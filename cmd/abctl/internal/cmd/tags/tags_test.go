package tags

import (
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
)

func TestSet(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var got *SetOptions
	run := func(args ...string) error {
		got = nil
		return cmdtest.Exec(NewCmdSet(f, func(o *SetOptions) error { got = o; return nil }), args...)
	}
	if err := run("contact-form", "env=prod", "urgent", "--color", "env=green", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	want := []client.TagInput{{Key: "env", Value: "prod"}, {Value: "urgent"}}
	if got.Target != "contact-form" || got.Format != printer.JSON || len(got.Request.Tags) != 2 ||
		got.Request.Tags[0] != want[0] || got.Request.Tags[1] != want[1] || got.Request.Colors["env"] != "green" {
		t.Errorf("options %+v, request %+v", got, got.Request)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"x", "=prod"}, `tag "=prod": write key=value`},
		{[]string{"x", "env="}, `tag "env=": write key=value`},
		{[]string{"x", ""}, "empty tag"},
		{[]string{"x", "a", "--color", "a=mauve"}, `--color "a=mauve": write key=color with a palette colour`},
		{[]string{"x"}, "takes a target and one or more tags"},
		{[]string{"x", "a", "-o", "wide"}, `-o "wide" is not a format`},
	} {
		if err := run(tc.args...); got != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("set %q: %v, want the usage error %q", tc.args, err, tc.want)
		}
	}
}

func TestHistoryKeysValues(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var h *HistoryOptions
	if err := cmdtest.Exec(NewCmdHistory(f, func(o *HistoryOptions) error { h = o; return nil }), "wr_1", "--key", "env", "--limit", "10", "--since", "24h"); err != nil {
		t.Fatal(err)
	}
	if h.Target != "wr_1" || h.Key != "env" || h.Limit != 10 || h.Since != 24*time.Hour || h.Format != printer.Table {
		t.Errorf("history %+v", h)
	}
	for _, limit := range []string{"-1", "501"} {
		if err := cmdtest.Exec(NewCmdHistory(f, nil), "x", "--limit", limit); !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "between 1 and 500") {
			t.Errorf("--limit %s: %v", limit, err)
		}
	}

	var k *KeysOptions
	if err := cmdtest.Exec(NewCmdKeys(f, func(o *KeysOptions) error { k = o; return nil }), "env", "--describe", ""); err != nil {
		t.Fatal(err)
	}
	if k.Key != "env" || k.Describe == nil || *k.Describe != "" {
		t.Errorf("keys --describe \"\": %+v", k)
	}
	k = nil
	if err := cmdtest.Exec(NewCmdKeys(f, func(o *KeysOptions) error { k = o; return nil })); err != nil || k.Describe != nil || k.Key != "" {
		t.Errorf("keys: %+v %v", k, err)
	}
	if err := cmdtest.Exec(NewCmdKeys(f, nil), "--describe", "x"); !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "--describe needs the KEY") {
		t.Errorf("--describe without a key: %v", err)
	}

	var v *ValuesOptions
	values := func(args ...string) error {
		v = nil
		return cmdtest.Exec(NewCmdValues(f, func(o *ValuesOptions) error { v = o; return nil }), args...)
	}
	if err := values("env", "prod", "--create", "--color", "green"); err != nil || !v.Create || *v.Value != "prod" || v.color() != "green" || v.recolor() {
		t.Errorf("--create: %+v %v", v, err)
	}
	if err := values("env", "prod", "--color", "red"); err != nil || v.Create || !v.recolor() {
		t.Errorf("--color: %+v %v", v, err)
	}
	if err := values("env"); err != nil || v.Key != "env" || v.Value != nil || v.recolor() {
		t.Errorf("a key's values: %+v %v", v, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"env", "--create"}, "--create and --color need KEY and VALUE"},
		{[]string{"--color", "red"}, "--create and --color need KEY and VALUE"},
		{[]string{"env", "prod", "--create", "--color", "mauve"}, `--color "mauve" is not a palette colour`},
	} {
		if err := values(tc.args...); v != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("values %q: %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestRenameAndDelete(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var r *RenameOptions
	if err := cmdtest.Exec(NewCmdRename(f, func(o *RenameOptions) error { r = o; return nil }), "env", "staging", "preprod"); err != nil {
		t.Fatal(err)
	}
	if r.Key != "env" || r.Value != "staging" || r.NewValue != "preprod" {
		t.Errorf("rename %+v", r)
	}

	var d *DeleteOptions
	del := func(args ...string) error {
		d = nil
		return cmdtest.Exec(NewCmdDelete(f, func(o *DeleteOptions) error { d = o; return nil }), args...)
	}
	if err := del("env", "prod"); d != nil || !cmdtest.IsUsage(err) ||
		!strings.Contains(err.Error(), "deleting tag value env=prod removes it from every agent and run: add --yes") {
		t.Errorf("delete a value without --yes: %v", err)
	}
	if err := del("env"); d != nil || !strings.Contains(err.Error(), "tag key env and every value of it") {
		t.Errorf("delete a key without --yes: %v", err)
	}
	if err := del("env", "--yes"); err != nil || d.Key != "env" || d.Value != nil || !d.Yes {
		t.Errorf("delete a key: %+v %v", d, err)
	}
}

func TestParseTag(t *testing.T) {
	for in, want := range map[string]client.TagInput{
		"env=prod":    {Key: "env", Value: "prod"},
		"a=b=c":       {Key: "a", Value: "b=c"},
		"reviewed":    {Value: "reviewed"},
		"team=web ui": {Key: "team", Value: "web ui"},
	} {
		if got, err := parseTag(in); err != nil || got != want {
			t.Errorf("parseTag(%q) = %+v, %v", in, got, err)
		}
	}
	if tagText(nil, "x") != "x" || tagText(new("k"), "v") != "k=v" {
		t.Error("tagText")
	}
}
