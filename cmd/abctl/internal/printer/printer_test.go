package printer

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

// TestCheck: -o takes the formats AddFlag allowed, the first by default;
// any other is a usage error naming the command and the allowed ones.
func TestCheck(t *testing.T) {
	root := &cobra.Command{Use: "abctl"}
	cmd := &cobra.Command{Use: "list"}
	root.AddCommand(cmd)
	var output Format
	AddFlag(cmd, &output, Table, JSON, Name)
	if output != Table {
		t.Errorf("default = %q, want the first format", output)
	}
	for _, ok := range []string{"table", "json", "name"} {
		if f, err := Check(cmd, ok); err != nil || string(f) != ok {
			t.Errorf("Check(%q) = %q, %v", ok, f, err)
		}
	}
	_, err := Check(cmd, "yaml")
	var ue *cmdutil.UsageError
	if !errors.As(err, &ue) || ue.CmdPath != "abctl list" {
		t.Fatalf("Check(yaml) = %v, want a usage error of abctl list", err)
	}
	if want := `-o "yaml" is not a format of "abctl list"; use one of: table, json, name`; err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
}

// TestAddFlagChecksBeforeRunning: a format AddFlag did not allow is a
// usage error before the command runs, whatever PreRunE the command had;
// an allowed one reaches the target, and the command's own PreRunE runs.
func TestAddFlagChecksBeforeRunning(t *testing.T) {
	var output Format
	var ran, preRan bool
	cmd := &cobra.Command{
		Use:     "list",
		PreRunE: func(*cobra.Command, []string) error { preRan = true; return nil },
		RunE:    func(*cobra.Command, []string) error { ran = true; return nil },
	}
	AddFlag(cmd, &output, Table, JSON)
	cmd.SetArgs([]string{"-o", "yaml"})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.Execute()
	var ue *cmdutil.UsageError
	if !errors.As(err, &ue) || ran || preRan {
		t.Fatalf("-o yaml: %v (ran %v, PreRunE ran %v), want a usage error and nothing run", err, ran, preRan)
	}
	cmd.SetArgs([]string{"-o", "json"})
	if err := cmd.Execute(); err != nil || !ran || !preRan || output != JSON {
		t.Errorf("-o json: %v (ran %v, PreRunE ran %v), output %q", err, ran, preRan, output)
	}
}

// TestWriteJSON: the service's own bytes keep their key order, indented;
// other values are indented without HTML escaping.
func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, json.RawMessage(`{"z":1,"a":{"y":[1,2]}}`)); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"z\": 1,\n  \"a\": {\n    \"y\": [\n      1,\n      2\n    ]\n  }\n}\n"; b.String() != want {
		t.Errorf("raw:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := WriteJSON(&b, map[string]string{"url": "http://x/?a=1&b=<2>"}); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"url\": \"http://x/?a=1&b=<2>\"\n}\n"; b.String() != want {
		t.Errorf("value: %q, want %q", b.String(), want)
	}
	if err := WriteJSON(&b, json.RawMessage(`{`)); err == nil {
		t.Error("broken JSON was written")
	}
}

// TestWriteYAML: YAML in the order of the JSON form, block style, quoting
// only where YAML needs it.
func TestWriteYAML(t *testing.T) {
	var b bytes.Buffer
	if err := WriteYAML(&b, json.RawMessage(`{"zeta":"a","alpha":[1,{"k":"1.5"}],"empty":""}`)); err != nil {
		t.Fatal(err)
	}
	want := "zeta: a\nalpha:\n  - 1\n  - k: \"1.5\"\nempty: \"\"\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	type rec struct {
		B string `json:"b"`
		A int    `json:"a"`
	}
	b.Reset()
	if err := WriteYAML(&b, rec{B: "x", A: 1}); err != nil {
		t.Fatal(err)
	}
	if b.String() != "b: x\na: 1\n" {
		t.Errorf("struct: %q", b.String())
	}
}

// TestTablePiped: piped, a table has no header, tab-separated cells on one
// line each, and RFC 3339 times in UTC.
func TestTablePiped(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tp := NewTable(ios, now, "id", "title", "created")
	tp.AddRow("a1", "two\twords\nand a line", tp.Time(now.Add(-time.Hour).In(time.FixedZone("x", 3600))))
	tp.AddRow("a2") // missing cells are empty
	tp.AddRow("a3", "", tp.Time(time.Time{}))
	if err := tp.Render(); err != nil {
		t.Fatal(err)
	}
	want := "a1\ttwo words and a line\t2026-01-02T02:04:05Z\na2\t\t\na3\t\t\n"
	if out.String() != want {
		t.Errorf("got %q\nwant %q", out.String(), want)
	}
}

// TestTableTerminal: on a terminal, a bold capitalised header, aligned
// columns cut to the width with "…", ids whole, and relative times.
func TestTableTerminal(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	ios.SetTTY(false, true, false)
	ios.SetWidth(40)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tp := NewTable(ios, now, "id", "title", "updated")
	tp.AddRow("wpid_0123456789", strings.Repeat("long title ", 5), tp.Time(now.Add(-2*time.Hour)))
	if err := tp.Render(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %q", out.String())
	}
	if !strings.HasPrefix(lines[0], "ID   ") || !strings.Contains(lines[0], "TITLE") || !strings.HasSuffix(lines[0], "UPDATED") {
		t.Errorf("header %q", lines[0])
	}
	if !strings.HasPrefix(lines[1], "wpid_0123456789  long titl") || !strings.Contains(lines[1], "…") || !strings.HasSuffix(lines[1], "2 hours ago") {
		t.Errorf("row %q", lines[1])
	}
	for _, l := range lines {
		if n := len([]rune(l)); n > 40 {
			t.Errorf("line of %d columns on a terminal of 40: %q", n, l)
		}
	}

	out.Reset()
	ios.SetColor(true)
	tp = NewTable(ios, now, "name")
	tp.AddRow("x")
	if err := tp.Render(); err != nil {
		t.Fatal(err)
	}
	if out.String() != "\x1b[1mNAME\x1b[0m\nx\n" {
		t.Errorf("in colour: %q", out.String())
	}
}

func TestAgo(t *testing.T) {
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Hour, "just now"},
		{30 * time.Second, "just now"},
		{time.Minute, "1 minute ago"},
		{59 * time.Minute, "59 minutes ago"},
		{25 * time.Hour, "1 day ago"},
		{45 * 24 * time.Hour, "1 month ago"},
		{800 * 24 * time.Hour, "2 years ago"},
	} {
		if got := Ago(now, now.Add(-tc.d)); got != tc.want {
			t.Errorf("Ago(%s) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// TestListing: one Listing prints in every format.
func TestListing(t *testing.T) {
	l := Listing{
		Value:   []map[string]int{{"n": 1}},
		Names:   []string{"thing/1"},
		Headers: []string{"n"},
		Rows:    func(t *TablePrinter) { t.AddRow("1") },
	}
	for _, tc := range []struct {
		format Format
		want   string
	}{
		{Table, "1\n"},
		{Wide, "1\n"},
		{JSON, "[\n  {\n    \"n\": 1\n  }\n]\n"},
		{YAML, "- n: 1\n"},
		{Name, "thing/1\n"},
	} {
		ios, _, out, _ := iostreams.Test()
		if err := l.Print(ios, time.Now(), tc.format); err != nil {
			t.Fatal(err)
		}
		if out.String() != tc.want {
			t.Errorf("%s: %q, want %q", tc.format, out.String(), tc.want)
		}
	}
}

// TestTableTerminalWholeLink: a file name and a link are never cut, and when
// a link alone is wider than the terminal the other columns stay whole too:
// the terminal wraps the line anyway.
func TestTableTerminalWholeLink(t *testing.T) {
	ios, _, out, _ := iostreams.Test()
	ios.SetTTY(false, true, false)
	ios.SetWidth(40)
	link := "http://127.0.0.1:8780/artifacts/wr_1/screenshot_001.png?signature=0123456789abcdef"
	tp := NewTable(ios, time.Now(), "id", "type", "file", "url")
	tp.AddRow("a_1", "screenshot", "screenshot_001.png", link)
	if err := tp.Render(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "a_1  screenshot  screenshot_001.png  "+link+"\n") {
		t.Errorf("got %q", out.String())
	}
}
