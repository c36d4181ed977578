// Package configcmd is `abctl config`: see and edit the configuration file's
// profiles.
package configcmd

import (
	"fmt"
	"sort"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/config"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
)

// NewCmd returns `abctl config`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the settings and manage the profiles of the configuration file",
		Long: "A profile names a service to talk to: a base URL and a way to find its API key.\n" +
			"The built-in profile \"local\" is the daemon on this machine. 'abctl help environment'\n" +
			"explains the file and the order of precedence.",
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newViewCmd(f), newUseCmd(f), newSetCmd(f), newDeleteCmd(f), newProfilesCmd(f))
	return cmd
}

// view is what `abctl config view` prints.
type view struct {
	ConfigFile string `json:"config_file"`
	Profile    string `json:"profile"`
	// The *From fields say where each value came from.
	ProfileFrom string `json:"profile_from"`
	BaseURL     string `json:"base_url"`
	BaseURLFrom string `json:"base_url_from"`
	APIKey      string `json:"api_key"` // "(set)" or "(not set)": never the key
	APIKeyFrom  string `json:"api_key_from,omitempty"`
	Local       bool   `json:"local_daemon"`
	DataDir     string `json:"data_dir,omitempty"`
	Embed       bool   `json:"embed,omitempty"`
	EmbedFrom   string `json:"embed_from,omitempty"`
	// LLM is the local daemon's language model (abctl daemon without
	// --llm-* flags, and the daemon a command starts inside itself).
	LLM modelView `json:"llm"`
}

// modelView is the language model's part of the view.
type modelView struct {
	Provider     string `json:"provider,omitempty"`
	ProviderFrom string `json:"provider_from,omitempty"`
	BaseURL      string `json:"base_url,omitempty"`
	BaseURLFrom  string `json:"base_url_from,omitempty"`
	Model        string `json:"model,omitempty"`
	ModelFrom    string `json:"model_from,omitempty"`
	APIKey       string `json:"api_key,omitempty"` // "(set)" or "(not set)": never the key
	APIKeyFrom   string `json:"api_key_from,omitempty"`
	// Error says what is wrong with the model settings; the others are
	// then empty.
	Error string `json:"error,omitempty"`
}

// newModelView resolves the model settings of file and f's environment.
func newModelView(file *config.File, getenv config.Getenv) modelView {
	m, err := file.ModelSettings(getenv)
	if err != nil {
		return modelView{Error: err.Error()}
	}
	v := modelView{
		Provider: m.Provider, ProviderFrom: m.ProviderFrom, BaseURL: m.BaseURL, BaseURLFrom: m.BaseURLFrom,
		Model: m.Model, ModelFrom: m.ModelFrom, APIKey: "(not set)",
	}
	if m.APIKeySet {
		v.APIKey, v.APIKeyFrom = "(set)", m.APIKeyFrom
	}
	return v
}

func newViewCmd(f *cmdutil.Factory) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "view",
		Short: "Show the resolved settings and where each comes from (never a key)",
		Long: "view shows the settings this command line resolves to: the profile, its base URL,\n" +
			"API key (whether one is set, never the key) and, for a local daemon's profile, its\n" +
			"data directory; then the local daemon's language model (provider, base URL, model,\n" +
			"key), as 'abctl daemon' without --llm-* flags would use it. Each comes with where\n" +
			"it came from: a flag, the environment, the configuration file or the defaults.",
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := printer.Check(cmd, output)
			if err != nil {
				return err
			}
			file, err := f.ConfigFile()
			if err != nil {
				return err
			}
			s, err := f.Settings()
			if err != nil {
				return err
			}
			v := view{
				ConfigFile: file.Path(), Profile: s.Profile, ProfileFrom: s.ProfileFrom,
				BaseURL: s.BaseURL, BaseURLFrom: s.BaseURLFrom, APIKey: "(not set)",
				Local: s.Local, DataDir: s.DataDir, Embed: s.Embed,
				LLM: newModelView(file, f.Getenv),
			}
			if s.Local {
				v.EmbedFrom = s.EmbedFrom
			}
			switch {
			case s.APIKey != "":
				v.APIKey, v.APIKeyFrom = "(set)", s.APIKeyFrom
			case s.Local:
				v.APIKey, v.APIKeyFrom = "(from the daemon's key file)", s.DataDir+"/api-key"
			}
			l := printer.Listing{Value: v, Headers: []string{"setting", "value", "from"}}
			l.Rows = func(t *printer.TablePrinter) {
				t.AddRow("config file", v.ConfigFile, "")
				t.AddRow("profile", v.Profile, v.ProfileFrom)
				t.AddRow("base URL", v.BaseURL, v.BaseURLFrom)
				t.AddRow("API key", v.APIKey, v.APIKeyFrom)
				if v.Local {
					t.AddRow("data dir", v.DataDir, "")
					t.AddRow("embedded daemon", fmt.Sprint(v.Embed), v.EmbedFrom)
				}
				if m := v.LLM; m.Error != "" {
					t.AddRow("model", "(invalid) "+m.Error, "")
				} else {
					t.AddRow("model provider", m.Provider, m.ProviderFrom)
					t.AddRow("model base URL", m.BaseURL, m.BaseURLFrom)
					t.AddRow("model", m.Model, m.ModelFrom)
					t.AddRow("model API key", m.APIKey, m.APIKeyFrom)
				}
			}
			return l.Print(f.IO, f.Now(), format)
		},
	}
	printer.AddFlag(cmd, &output, printer.Table, printer.JSON, printer.YAML)
	return cmd
}

func newUseCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:               "use-profile NAME",
		Short:             "Make NAME the profile used by default",
		Args:              cmdutil.ExactArgs(1, "the name of a profile"),
		ValidArgsFunction: profileNames(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			file, err := f.ConfigFile()
			if err != nil {
				return err
			}
			if _, ok := file.Profile(args[0]); !ok {
				return &config.UnknownProfileError{Name: args[0], From: "the command line", Known: file.ProfileNames()}
			}
			file.SetCurrentProfile(args[0])
			if err := file.Save(); err != nil {
				return err
			}
			fmt.Fprintf(f.IO.ErrOut, "Profile %q is now the default (%s).\n", args[0], file.Path())
			return nil
		},
	}
}

func newSetCmd(f *cmdutil.Factory) *cobra.Command {
	var p config.Profile
	var embed string
	cmd := &cobra.Command{
		Use:   "set-profile NAME",
		Short: "Create or change a profile",
		Long: "set-profile creates the profile NAME, or changes the settings given as flags and keeps\n" +
			"the others. Prefer --api-key-env (the name of a variable holding the key) to\n" +
			"--api-key, which writes the key into the file (mode 0600).",
		Example: "  abctl config set-profile cloud --base-url https://api.skyvern.com --api-key-env SKYVERN_API_KEY\n" +
			"  abctl config set-profile lab --base-url http://10.0.0.5:8780 --api-key-env LAB_KEY\n" +
			"  abctl config set-profile local --data-dir ./data",
		Args:              cmdutil.ExactArgs(1, "the name of the profile"),
		ValidArgsFunction: profileNames(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := config.ValidateProfileName(name); err != nil {
				return cmdutil.Usagef(cmd, "%v", err)
			}
			file, err := f.ConfigFile()
			if err != nil {
				return err
			}
			cur := file.Profiles[name]
			fl := cmd.Flags()
			if fl.Changed("base-url") {
				cur.BaseURL = p.BaseURL
			}
			if fl.Changed("api-key") {
				cur.APIKey, cur.APIKeyEnv = p.APIKey, ""
			}
			if fl.Changed("api-key-env") {
				cur.APIKeyEnv, cur.APIKey = p.APIKeyEnv, ""
			}
			if fl.Changed("data-dir") {
				cur.DataDir = p.DataDir
			}
			if fl.Changed("embed") {
				switch embed {
				case "true":
					cur.Embed = nil
				case "false":
					no := false
					cur.Embed = &no
				default:
					return cmdutil.Usagef(cmd, "--embed must be true or false, not %q", embed)
				}
			}
			if cur.BaseURL == "" && cur.DataDir == "" && name != config.LocalProfile {
				return cmdutil.Usagef(cmd, "profile %q needs --base-url (or --data-dir for a local daemon)", name)
			}
			if err := file.SetProfile(name, cur); err != nil {
				return err
			}
			if err := file.Save(); err != nil {
				return err
			}
			fmt.Fprintf(f.IO.ErrOut, "Profile %q saved in %s.", name, file.Path())
			if file.CurrentProfile != name {
				fmt.Fprintf(f.IO.ErrOut, " Use it with --profile %s, or make it the default with 'abctl config use-profile %s'.", name, name)
			}
			fmt.Fprintln(f.IO.ErrOut)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&p.BaseURL, "base-url", "", "the service's base URL")
	fl.StringVar(&p.APIKeyEnv, "api-key-env", "", "name of the environment variable that holds the API key")
	fl.StringVar(&p.APIKey, "api-key", "", "the API key itself, written into the file (prefer --api-key-env)")
	fl.StringVar(&p.DataDir, "data-dir", "", "data directory of a local daemon (its key is read from there)")
	fl.StringVar(&embed, "embed", "true", "for a local daemon: start it inside commands when it is not running")
	cmd.MarkFlagsMutuallyExclusive("api-key", "api-key-env")
	return cmd
}

func newDeleteCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:               "delete-profile NAME",
		Short:             "Remove a profile from the configuration file",
		Args:              cmdutil.ExactArgs(1, "the name of a profile"),
		ValidArgsFunction: profileNames(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			file, err := f.ConfigFile()
			if err != nil {
				return err
			}
			if !file.DeleteProfile(args[0]) {
				return fmt.Errorf("the configuration file %s has no profile %q", file.Path(), args[0])
			}
			if err := file.Save(); err != nil {
				return err
			}
			fmt.Fprintf(f.IO.ErrOut, "Profile %q removed from %s.\n", args[0], file.Path())
			return nil
		},
	}
}

func newProfilesCmd(f *cmdutil.Factory) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "profiles",
		Short: "List the profiles (never their keys)",
		Args:  cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := printer.Check(cmd, output)
			if err != nil {
				return err
			}
			file, err := f.ConfigFile()
			if err != nil {
				return err
			}
			s, err := f.Settings()
			if err != nil {
				return err
			}
			type row struct {
				Name    string `json:"name"`
				Current bool   `json:"current"`
				BaseURL string `json:"base_url"`
				Key     string `json:"api_key"`
			}
			var rows []row
			for _, name := range file.ProfileNames() {
				p, _ := file.Profile(name)
				r := row{Name: name, Current: name == s.Profile, BaseURL: p.BaseURL}
				switch {
				case p.APIKeyEnv != "":
					r.Key = "$" + p.APIKeyEnv
				case p.APIKey != "":
					r.Key = "(in the file)"
				case file.IsLocal(name, p):
					r.Key = "(the daemon's key file)"
				}
				if r.BaseURL == "" && file.IsLocal(name, p) {
					r.BaseURL = f.LocalBaseURL()
				}
				rows = append(rows, r)
			}
			sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
			l := printer.Listing{Value: rows, Headers: []string{"current", "name", "base URL", "API key"}}
			for _, r := range rows {
				l.Names = append(l.Names, r.Name)
			}
			l.Rows = func(t *printer.TablePrinter) {
				for _, r := range rows {
					mark := ""
					if r.Current {
						mark = "*"
					}
					t.AddRow(mark, r.Name, r.BaseURL, r.Key)
				}
			}
			return l.Print(f.IO, f.Now(), format)
		},
	}
	printer.AddFlag(cmd, &output, printer.Table, printer.JSON, printer.YAML, printer.Name)
	return cmd
}

func profileNames(f *cmdutil.Factory) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		file, err := f.ConfigFile()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return file.ProfileNames(), cobra.ShellCompDirectiveNoFileComp
	}
}
