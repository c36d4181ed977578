package action

import (
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
)

func parse(t *testing.T, kind string, args ...string) (*ActionOptions, error) {
	t.Helper()
	f, _ := cmdtest.NewFactory(t, nil)
	for _, k := range Kinds {
		if k.Use == kind {
			var got *ActionOptions
			err := cmdtest.Exec(NewCmdKind(f, k, func(o *ActionOptions) error { got = o; return nil }), args...)
			return got, err
		}
	}
	t.Fatalf("no action %q", kind)
	return nil, nil
}

func TestFlags(t *testing.T) {
	o, err := parse(t, "input-text", "--url", "http://x/form.html", "--selector", "#text", "--value", "Ada", "--timeout", "5s", "-o", "id",
		"--browser-address", "http://127.0.0.1:9222")
	if err != nil {
		t.Fatal(err)
	}
	if o.Kind.Type != client.ActionInputText || o.URL != "http://x/form.html" || o.Selector != "#text" || o.Value != "Ada" || !o.ValueSet ||
		o.Timeout != 5*time.Second || o.Output != "id" || o.BrowserAddress != "http://127.0.0.1:9222" {
		t.Errorf("options %+v", o)
	}
	o, err = parse(t, "click", "--run", " run/wr_1 ", "--intention", "the submit button")
	if err != nil || o.Run != "wr_1" || o.Intention != "the submit button" || o.Output != "json" || o.ValueSet {
		t.Errorf("click --run: %+v %v", o, err)
	}
	if o, err := parse(t, "upload-file", "--url", "u", "--selector", "s", "--file-url", ""); err != nil || !o.ValueSet || o.Kind.ValueFlag != "file-url" {
		t.Errorf("upload-file with an empty --file-url: %+v %v", o, err)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		kind string
		args []string
		want string
	}{
		{"click", []string{"--url", "u", "--selector", "s", "-o", "yaml"}, `-o must be json or id, not "yaml"`},
		{"click", []string{"--selector", "s"}, "give --url (a new page) or --run"},
		{"click", []string{"--url", "u"}, "give --selector, --intention, or both"},
		{"input-text", []string{"--url", "u", "--selector", "s"}, "input-text needs --value"},
		{"upload-file", []string{"--url", "u", "--selector", "s"}, "upload-file needs --file-url"},
		{"click", []string{"--url", "u", "--selector", "s", "--timeout", "-1s"}, "--timeout must be positive"},
		{"click", []string{"--url", "u", "--selector", "s", "--value", "x"}, "unknown flag: --value"},
	} {
		o, err := parse(t, tc.kind, tc.args...)
		if o != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %q: %v, want the usage error %q", tc.kind, tc.args, err, tc.want)
		}
	}
}

func TestGroup(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	cmd := NewCmdAction(f)
	var names []string
	for _, c := range cmd.Commands() {
		names = append(names, c.Name())
		if v := c.Flags().Lookup("value"); (v != nil) != (c.Name() == "input-text" || c.Name() == "select-option") {
			t.Errorf("%s has --value: %v", c.Name(), v != nil)
		}
	}
	if strings.Join(names, ",") != "click,input-text,select-option,upload-file" {
		t.Errorf("subcommands %q", names)
	}
	if err := cmdtest.Exec(cmd, "tap"); !cmdtest.IsUsage(err) {
		t.Errorf("action tap: %v", err)
	}
}
