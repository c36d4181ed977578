package mcpcmd

import (
	"testing"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
)

func TestFlags(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var got *MCPOptions
	if err := cmdtest.Exec(NewCmdMCP(f, func(o *MCPOptions) error { got = o; return nil }), "-v"); err != nil {
		t.Fatal(err)
	}
	if !got.Verbose || got.IO != f.IO || got.Client == nil {
		t.Errorf("options %+v", got)
	}
	got = nil
	if err := cmdtest.Exec(NewCmdMCP(f, func(o *MCPOptions) error { got = o; return nil }), "serve"); got != nil || !cmdtest.IsUsage(err) {
		t.Errorf("an argument: %v", err)
	}
}
