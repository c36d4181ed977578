// Package mcpcmd is `abctl mcp`: the MCP tools of package mcpserver over
// stdio, against the current profile, for desktop assistants and IDEs.
package mcpcmd

import (
	"context"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/buildinfo"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/mcpserver"
)

// MCPOptions are the inputs of `abctl mcp`.
type MCPOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)

	// Verbose logs the protocol's sessions on stderr.
	Verbose bool
}

// NewCmdMCP returns `abctl mcp`. runF, when not nil, is called with the
// options instead of serving.
func NewCmdMCP(f *cmdutil.Factory, runF func(*MCPOptions) error) *cobra.Command {
	opts := &MCPOptions{IO: f.IO, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the MCP tools over stdio, for an AI assistant",
		Long: "mcp serves the Model Context Protocol tools (run a task or an agent, follow and cancel\n" +
			"runs, manage agents, folders and tags, single browser actions) over stdin and stdout,\n" +
			"against the current profile: the local daemon (started inside abctl when none runs),\n" +
			"or the hosted service. stdout carries only protocol messages; logs go to stderr.\n\n" +
			"A desktop assistant's configuration needs one entry, for example:\n\n" +
			"  {\"mcpServers\": {\"abctl\": {\"command\": \"abctl\", \"args\": [\"mcp\"]}}}\n\n" +
			"and, for the hosted service, \"args\": [\"mcp\", \"--profile\", \"cloud\"] with the key in\n" +
			"the profile's variable. The daemon serves the same tools at /mcp over streamable HTTP.",
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmdutil.Run(cmd, opts, runF, runMCP)
		},
	}
	cmd.Flags().BoolVarP(&opts.Verbose, "verbose", "v", false, "log the protocol's sessions on stderr")
	return cmd
}

func runMCP(ctx context.Context, opts *MCPOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	level := slog.LevelWarn
	if opts.Verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(opts.IO.ErrOut, &slog.HandlerOptions{Level: level}))
	return mcpserver.ServeStdio(ctx, c, opts.IO.In, opts.IO.Out, mcpserver.Options{
		Version: buildinfo.Get().Version, Logger: logger,
	})
}
