// Package configcmd is `abctl config`: see and edit the configuration file's
// profiles.
package configcmd

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/config"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
)

// NewCmdConfig returns `abctl config`.
func NewCmdConfig(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the settings and manage the profiles of the configuration file",
		Long: "A profile names a service to talk to: a base URL and a way to find its API key.\n" +
			"The built-in profile \"local\" is the daemon on this machine. 'abctl help environment'\n" +
			"explains the file and the order of precedence.",
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdView(f, nil), NewCmdUseProfile(f, nil), NewCmdSetProfile(f, nil), NewCmdDeleteProfile(f, nil), NewCmdProfiles(f, nil))
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

// ViewOptions are the inputs of `abctl config view`.
type ViewOptions struct {
	IO         *iostreams.IOStreams
	Now        func() time.Time
	Getenv     config.Getenv
	ConfigFile func() (*config.File, error)
	Settings   func() (*config.Settings, error)
	// BaseURL is the base URL the commands talk to and where it comes
	// from: for a local daemon's profile, the running daemon's (its state
	// file names it), which can differ from the profile's.
	BaseURL func(context.Context) (base, from string, err error)
	// KeyFileName is the local daemon's key file in its data directory.
	KeyFileName string

	Format printer.Format
}

// NewCmdView returns `abctl config view`. runF, when not nil, is called
// with the options instead of showing the settings.
func NewCmdView(f *cmdutil.Factory, runF func(*ViewOptions) error) *cobra.Command {
	opts := &ViewOptions{IO: f.IO, Now: f.Now, Getenv: f.Getenv, ConfigFile: f.ConfigFile, Settings: f.Settings, BaseURL: f.ResolvedBaseURL, KeyFileName: f.KeyFileName}
	cmd := &cobra.Command{
		Use:   "view",
		Short: "Show the resolved settings and where each comes from (never a key)",
		Long: "view shows the settings this command line resolves to: the profile, the base URL\n" +
			"the commands talk to (for a local daemon's profile, where the daemon that runs over its\n" +
			"data directory listens, as its state file daemon.json says), the API key (whether one is set, never the key) and, for a local daemon's profile, its\n" +
			"data directory; then the local daemon's language model (provider, base URL, model,\n" +
			"key), as 'abctl daemon' without --llm-* flags would use it. Each comes with where\n" +
			"it came from: a flag, the environment, the configuration file or the defaults.",
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmdutil.Run(cmd, opts, runF, runView)
		},
	}
	printer.AddFlag(cmd, &opts.Format, printer.Table, printer.JSON, printer.YAML)
	return cmd
}

func runView(ctx context.Context, opts *ViewOptions) error {
	file, s, err := readConfig(opts.ConfigFile, opts.Settings)
	if err != nil {
		return err
	}
	v := view{
		ConfigFile: file.Path(), Profile: s.Profile, ProfileFrom: s.ProfileFrom,
		BaseURL: s.BaseURL, BaseURLFrom: s.BaseURLFrom, APIKey: "(not set)",
		Local: s.Local, DataDir: s.DataDir, Embed: s.Embed,
		LLM: newModelView(file, opts.Getenv),
	}
	if s.Local {
		v.EmbedFrom = s.EmbedFrom
	}
	if opts.BaseURL != nil {
		// What the commands really talk to: a local daemon may listen
		// elsewhere than the profile's address (abctl daemon --listen).
		if v.BaseURL, v.BaseURLFrom, err = opts.BaseURL(ctx); err != nil {
			return err
		}
	}
	switch {
	case s.APIKey != "":
		v.APIKey, v.APIKeyFrom = "(set)", s.APIKeyFrom
	case s.Local:
		v.APIKey, v.APIKeyFrom = "(from the daemon's key file)", s.DataDir+"/"+opts.KeyFileName
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
	return l.Print(opts.IO, opts.Now(), opts.Format)
}

// ProfileOptions are the inputs of the commands on one profile of the
// configuration file, named on the command line: use-profile and
// delete-profile.
type ProfileOptions struct {
	IO         *iostreams.IOStreams
	ConfigFile func() (*config.File, error)

	// Name is the profile to make the default, or to remove.
	Name string
}

// UseProfileOptions are the inputs of `abctl config use-profile`.
type UseProfileOptions = ProfileOptions

// NewCmdUseProfile returns `abctl config use-profile`. runF, when not nil,
// is called with the options instead of changing the file.
func NewCmdUseProfile(f *cmdutil.Factory, runF func(*UseProfileOptions) error) *cobra.Command {
	return newCmdOnProfile(f, "use-profile NAME", "Make NAME the profile used by default", runF, runUseProfile)
}

// newCmdOnProfile returns the command use (its Use), which runs run on the
// profile its argument names, or runF when not nil.
func newCmdOnProfile(f *cmdutil.Factory, use, short string, runF, run func(*ProfileOptions) error) *cobra.Command {
	opts := &ProfileOptions{IO: f.IO, ConfigFile: f.ConfigFile}
	return &cobra.Command{
		Use:               use,
		Short:             short,
		Args:              cmdutil.ExactArgs(1, "the name of a profile"),
		ValidArgsFunction: profileNames(f),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return run(opts)
		},
	}
}

func runUseProfile(opts *UseProfileOptions) error {
	file, err := opts.ConfigFile()
	if err != nil {
		return err
	}
	if _, ok := file.Profile(opts.Name); !ok {
		return &config.UnknownProfileError{Name: opts.Name, From: "the command line", Known: file.ProfileNames()}
	}
	file.SetCurrentProfile(opts.Name)
	if err := file.Save(); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Profile %q is now the default (%s).\n", opts.Name, file.Path())
	return nil
}

// SetProfileOptions are the inputs of `abctl config set-profile`.
type SetProfileOptions struct {
	IO         *iostreams.IOStreams
	ConfigFile func() (*config.File, error)

	// Name is the profile to create or change.
	Name string
	// The settings given as flags; nil keeps the profile's.
	BaseURL, APIKey, APIKeyEnv, DataDir *string
	// Embed is --embed, "true" or "false"; nil keeps the profile's.
	Embed *string
}

// NewCmdSetProfile returns `abctl config set-profile`. runF, when not nil,
// is called with the validated options instead of changing the file.
func NewCmdSetProfile(f *cmdutil.Factory, runF func(*SetProfileOptions) error) *cobra.Command {
	opts := &SetProfileOptions{IO: f.IO, ConfigFile: f.ConfigFile}
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
			opts.Name = args[0]
			given := func(flag string, v *string) *string {
				if cmd.Flags().Changed(flag) {
					return v
				}
				return nil
			}
			opts.BaseURL = given("base-url", &p.BaseURL)
			opts.APIKey = given("api-key", &p.APIKey)
			opts.APIKeyEnv = given("api-key-env", &p.APIKeyEnv)
			opts.DataDir = given("data-dir", &p.DataDir)
			opts.Embed = given("embed", &embed)
			if err := opts.Validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runSetProfile(opts)
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

// Validate checks the profile's name and --embed.
func (o *SetProfileOptions) Validate() error {
	if err := config.ValidateProfileName(o.Name); err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	if o.Embed != nil && *o.Embed != "true" && *o.Embed != "false" {
		return cmdutil.UsageErrorf("--embed must be true or false, not %q", *o.Embed)
	}
	return nil
}

func runSetProfile(opts *SetProfileOptions) error {
	name := opts.Name
	file, err := opts.ConfigFile()
	if err != nil {
		return err
	}
	cur := file.Profiles[name]
	if opts.BaseURL != nil {
		cur.BaseURL = *opts.BaseURL
	}
	if opts.APIKey != nil {
		cur.APIKey, cur.APIKeyEnv = *opts.APIKey, ""
	}
	if opts.APIKeyEnv != nil {
		cur.APIKeyEnv, cur.APIKey = *opts.APIKeyEnv, ""
	}
	if opts.DataDir != nil {
		cur.DataDir = *opts.DataDir
	}
	if opts.Embed != nil {
		cur.Embed = nil // true, the default
		if *opts.Embed == "false" {
			cur.Embed = new(false)
		}
	}
	if cur.BaseURL == "" && cur.DataDir == "" && name != config.LocalProfile {
		return cmdutil.UsageErrorf("profile %q needs --base-url (or --data-dir for a local daemon)", name)
	}
	if err := file.SetProfile(name, cur); err != nil {
		return err
	}
	if err := file.Save(); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Profile %q saved in %s.", name, file.Path())
	if file.CurrentProfile != name {
		fmt.Fprintf(opts.IO.ErrOut, " Use it with --profile %s, or make it the default with 'abctl config use-profile %s'.", name, name)
	}
	fmt.Fprintln(opts.IO.ErrOut)
	return nil
}

// DeleteProfileOptions are the inputs of `abctl config delete-profile`.
type DeleteProfileOptions = ProfileOptions

// NewCmdDeleteProfile returns `abctl config delete-profile`. runF, when
// not nil, is called with the options instead of changing the file.
func NewCmdDeleteProfile(f *cmdutil.Factory, runF func(*DeleteProfileOptions) error) *cobra.Command {
	return newCmdOnProfile(f, "delete-profile NAME", "Remove a profile from the configuration file", runF, runDeleteProfile)
}

func runDeleteProfile(opts *DeleteProfileOptions) error {
	file, err := opts.ConfigFile()
	if err != nil {
		return err
	}
	if !file.DeleteProfile(opts.Name) {
		return fmt.Errorf("the configuration file %s has no profile %q", file.Path(), opts.Name)
	}
	if err := file.Save(); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Profile %q removed from %s.\n", opts.Name, file.Path())
	return nil
}

// ProfilesOptions are the inputs of `abctl config profiles`.
type ProfilesOptions struct {
	IO         *iostreams.IOStreams
	Now        func() time.Time
	ConfigFile func() (*config.File, error)
	Settings   func() (*config.Settings, error)
	// LocalBaseURL is the base URL of a local profile that names none.
	LocalBaseURL func() string

	Format printer.Format
}

// NewCmdProfiles returns `abctl config profiles`. runF, when not nil, is
// called with the options instead of listing the profiles.
func NewCmdProfiles(f *cmdutil.Factory, runF func(*ProfilesOptions) error) *cobra.Command {
	opts := &ProfilesOptions{IO: f.IO, Now: f.Now, ConfigFile: f.ConfigFile, Settings: f.Settings, LocalBaseURL: f.LocalBaseURL}
	cmd := &cobra.Command{
		Use:   "profiles",
		Short: "List the profiles (never their keys)",
		Args:  cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runProfiles(opts)
		},
	}
	printer.AddFlag(cmd, &opts.Format, printer.Table, printer.JSON, printer.YAML, printer.Name)
	return cmd
}

func runProfiles(opts *ProfilesOptions) error {
	file, s, err := readConfig(opts.ConfigFile, opts.Settings)
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
			r.BaseURL = opts.LocalBaseURL()
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
	return l.Print(opts.IO, opts.Now(), opts.Format)
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

// readConfig reads the configuration file, and the settings this command
// line resolves to with it.
func readConfig(configFile func() (*config.File, error), settings func() (*config.Settings, error)) (*config.File, *config.Settings, error) {
	file, err := configFile()
	if err != nil {
		return nil, nil, err
	}
	s, err := settings()
	if err != nil {
		return nil, nil, err
	}
	return file, s, nil
}
