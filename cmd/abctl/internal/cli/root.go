package cli

import (
	"github.com/spf13/cobra"

	"github.com/abctl/abctl/cmd/abctl/internal/cmd/action"
	"github.com/abctl/abctl/cmd/abctl/internal/cmd/apply"
	"github.com/abctl/abctl/cmd/abctl/internal/cmd/configcmd"
	"github.com/abctl/abctl/cmd/abctl/internal/cmd/credentials"
	"github.com/abctl/abctl/cmd/abctl/internal/cmd/daemoncmd"
	"github.com/abctl/abctl/cmd/abctl/internal/cmd/deletecmd"
	"github.com/abctl/abctl/cmd/abctl/internal/cmd/diff"
	"github.com/abctl/abctl/cmd/abctl/internal/cmd/folders"
	"github.com/abctl/abctl/cmd/abctl/internal/cmd/get"
	"github.com/abctl/abctl/cmd/abctl/internal/cmd/mcpcmd"
	"github.com/abctl/abctl/cmd/abctl/internal/cmd/modelbyhand"
	"github.com/abctl/abctl/cmd/abctl/internal/cmd/models"
	"github.com/abctl/abctl/cmd/abctl/internal/cmd/opencmd"
	"github.com/abctl/abctl/cmd/abctl/internal/cmd/profiles"
	runcmd "github.com/abctl/abctl/cmd/abctl/internal/cmd/run"
	"github.com/abctl/abctl/cmd/abctl/internal/cmd/runs"
	"github.com/abctl/abctl/cmd/abctl/internal/cmd/schedules"
	"github.com/abctl/abctl/cmd/abctl/internal/cmd/scripts"
	"github.com/abctl/abctl/cmd/abctl/internal/cmd/sessions"
	"github.com/abctl/abctl/cmd/abctl/internal/cmd/tags"
	"github.com/abctl/abctl/cmd/abctl/internal/cmd/upload"
	"github.com/abctl/abctl/cmd/abctl/internal/cmd/version"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/completion"
	"github.com/abctl/abctl/cmd/abctl/internal/config"
)

// NewRootCmd builds the whole command tree over f.
func NewRootCmd(f *cmdutil.Factory) *cobra.Command {
	var showVersion bool
	root := &cobra.Command{
		Use:   "abctl",
		Short: "Command-line client for a browser-automation agent service",
		Long: "abctl drives a browser-automation agent service through its v1 API: an AI agent\n" +
			"works a real browser towards a goal on a website and returns the data it found.\n" +
			"It keeps agents as files, starts and follows their runs, and manages the rest,\n" +
			"against the hosted service or a local daemon that serves the same API.\n\n" +
			"Out of the box it talks to the local daemon (abctl daemon), starting one inside the\n" +
			"command when none is running. 'abctl help environment' lists the settings, and\n" +
			"'abctl help exit-codes' what each exit status means.",
		Example: "  abctl apply -f agents/            # create or update the agents of a directory\n" +
			"  abctl run agents/contact.yaml --param url=https://example.com/contact\n" +
			"  abctl run --prompt 'Find the price of the first product' --url https://shop.example.com\n" +
			"  abctl get runs -o json",
		Args: cmdutil.GroupArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if showVersion {
				return version.Print(cmd.OutOrStdout())
			}
			return cmd.Help()
		},
		SilenceErrors:              true,
		SilenceUsage:               true,
		SuggestionsMinimumDistance: 2,
	}
	root.Flags().BoolVar(&showVersion, "version", false, "print the version of abctl and exit")
	pf := root.PersistentFlags()
	pf.String(config.FlagProfile, "", "profile of the configuration file to use (default: $ABCTL_PROFILE, the file's current_profile, or \"local\")")
	pf.String(config.FlagBaseURL, "", "base URL of the service (default: $ABCTL_BASE_URL, or the profile's)")
	_ = root.RegisterFlagCompletionFunc(config.FlagProfile, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		file, err := f.ConfigFile()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return file.ProfileNames(), cobra.ShellCompDirectiveNoFileComp
	})
	f.GlobalFlags = pf

	root.SetFlagErrorFunc(cmdutil.FlagError)
	root.AddGroup(
		&cobra.Group{ID: "agents", Title: "Agents as files:"},
		&cobra.Group{ID: "runs", Title: "Runs:"},
		&cobra.Group{ID: "manage", Title: "Everything else:"},
	)
	add := func(group string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = group
			root.AddCommand(c)
		}
	}
	add("agents", apply.NewCmdApply(f, nil), diff.NewCmdDiff(f, nil), get.NewCmdGet(f), deletecmd.NewCmdDelete(f, nil))
	add("runs", runcmd.NewCmdRun(f, nil), runcmd.NewCmdLogin(f, nil), runs.NewCmdRuns(f), action.NewCmdAction(f), upload.NewCmdUpload(f, nil),
		opencmd.NewCmdOpen(f, nil))
	add("manage", folders.NewCmdFolders(f), tags.NewCmdTags(f), credentials.NewCmdCredentials(f), profiles.NewCmdProfiles(f), sessions.NewCmdSessions(f),
		schedules.NewCmdSchedules(f),
		models.NewCmdModels(f),
		scripts.NewCmdScripts(f),
		configcmd.NewCmdConfig(f), daemoncmd.NewCmdDaemon(f, nil), modelbyhand.NewCmdModelByHand(f, nil),
		mcpcmd.NewCmdMCP(f, nil), version.NewCmdVersion(), completion.NewCmdCompletion())
	root.SetHelpCommandGroupID("manage")
	root.AddCommand(helpTopics()...)
	return root
}
