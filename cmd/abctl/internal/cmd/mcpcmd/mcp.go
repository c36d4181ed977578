// Package mcpcmd is `abctl mcp`: the MCP tools of package mcpserver over
// stdio, against the current profile, for desktop assistants and IDEs.
package mcpcmd

import (
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/cmd/abctl/internal/buildinfo"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/mcpserver"
)

// NewCmd returns `abctl mcp`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var verbose bool
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
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			level := slog.LevelWarn
			if verbose {
				level = slog.LevelDebug
			}
			logger := slog.New(slog.NewTextHandler(f.IO.ErrOut, &slog.HandlerOptions{Level: level}))
			return mcpserver.ServeStdio(cmd.Context(), c, f.IO.In, f.IO.Out, mcpserver.Options{
				Version: buildinfo.Get().Version, Logger: logger,
			})
		},
	}
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "log the protocol's sessions on stderr")
	return cmd
}
