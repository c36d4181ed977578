// Package models is `abctl models`: the organization's own model endpoints
// (/v1/custom-llms), which agents and blocks use by naming the model's id
// in their model ({"model_name": "cllm_..."}).
//
// A model's API key never comes from the command line, where the shell's
// history and the process list would keep it: with --api-key-stdin it is
// typed at a prompt that does not echo when stdin is a terminal, or read
// from piped stdin otherwise. No flag carries one, and a test checks that
// none does.
package models

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/cmd/abctl/internal/listing"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
)

// kind is how -o name prints a model: model/ID.
const kind = resource.Kind("model")

// NewCmdModels returns `abctl models`.
func NewCmdModels(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "models",
		Aliases: []string{"model", "custom-llms"},
		Short:   "Register the organization's own model endpoints for agents to use",
		Long: "A custom model is a model endpoint of your organization: an OpenAI-compatible server\n" +
			"(vLLM, llama.cpp, LM Studio, a gateway), an Ollama or OpenRouter, with its model name,\n" +
			"address and key. Agents and blocks use it by naming its id in their model:\n\n" +
			"  model: {model_name: cllm_123}\n\n" +
			"Runs of other organizations cannot. The key goes in once and never comes back; it is\n" +
			"never a flag: --api-key-stdin reads it at a prompt without echo, or from piped stdin.\n" +
			"VALID says whether the endpoint answered a short test call when the model was saved.\n\n" +
			"MODEL_ID is an id (cllm_...) or model/ID, as -o name prints it.",
		Example: "  abctl models create 'Team GPU' --provider openai_compatible --model qwen2.5-7b --api-base http://gpu:8000/v1\n" +
			"  printf '%s' \"$OPENROUTER_KEY\" | abctl models create Router --provider openrouter --model meta-llama/llama-3.1-70b-instruct --api-key-stdin\n" +
			"  abctl models list\n" +
			"  abctl models delete cllm_123 --yes",
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdList(f, nil), NewCmdCreate(f, nil), NewCmdUpdate(f, nil), NewCmdDelete(f, nil))
	return cmd
}

// modelID reads a MODEL_ID argument: an id, or model/ID.
func modelID(arg string) (string, error) {
	id := strings.TrimSpace(arg)
	if rest, ok := strings.CutPrefix(id, string(kind)+"/"); ok {
		id = rest
	}
	if id == "" || strings.Contains(id, "/") {
		return "", fmt.Errorf("%q is not a model id: give an id (cllm_...) or model/ID, as 'abctl models list -o name' prints it", arg)
	}
	return id, nil
}

var providers = []string{"openai_compatible", "ollama", "openrouter"}

// modelsListing shows custom models: ID, NAME, PROVIDER, MODEL, API BASE,
// VALID (never a key). single means one was asked for, which JSON and YAML
// then show alone.
func modelsListing(ms []*client.CustomLLM, single bool) printer.Listing {
	if ms == nil {
		ms = []*client.CustomLLM{}
	}
	l := printer.Listing{Value: listing.One(ms, single), Headers: []string{"id", "name", "provider", "model", "api base", "valid"}}
	for _, m := range ms {
		l.Names = append(l.Names, kind.Name(m.ID))
	}
	l.Rows = func(t *printer.TablePrinter) {
		for _, m := range ms {
			base := ""
			if m.Config.APIBase != nil {
				base = *m.Config.APIBase
			}
			t.AddRow(m.ID, m.Config.DisplayName, string(m.Config.Provider), m.Config.ModelName, base, strconv.FormatBool(m.Valid))
		}
	}
	return l
}

// ListOptions are the inputs of `abctl models list`.
type ListOptions = listing.ListOptions

// NewCmdList returns `abctl models list`. runF, when not nil, is called
// with the validated options instead of listing.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{}
	return listing.NewListCmd(f, opts, "", &cobra.Command{
		Use:     "list",
		Short:   "List the organization's custom models, newest first (never their keys)",
		Example: "  abctl models list\n  abctl models list -o json",
	}, func(cmd *cobra.Command, _ []string) error {
		return cmdutil.Run(cmd, opts, runF, runList)
	})
}

func runList(ctx context.Context, opts *ListOptions) error {
	ms, err := listing.ReadAll(ctx, opts, "list custom models", func(c *client.Client) ([]*client.CustomLLM, error) { return c.CustomLLMs.List(ctx) })
	if err != nil {
		return err
	}
	return opts.Print(modelsListing(ms, false))
}

// CreateOptions are the inputs of `abctl models create`.
type CreateOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time
	// ReadHidden shows prompt on stderr and reads a line from the terminal
	// without echoing it: how the key is asked for when stdin is a
	// terminal. NewCmdCreate sets it; tests replace it.
	ReadHidden func(ctx context.Context, prompt string) (string, error)

	// Config is the model's configuration, but its key.
	Config client.CustomLLMConfig
	// KeyFromStdin reads the API key (--api-key-stdin).
	KeyFromStdin bool
	Format       printer.Format
}

// NewCmdCreate returns `abctl models create`. runF, when not nil, is
// called with the validated options instead of creating the model.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: f.IO, Client: f.Client, Now: f.Now, ReadHidden: cmdutil.HiddenReader(f.IO)}
	var provider, apiBase, apiVersion, effort string
	var noVision bool
	var maxTokens int
	var temperature float64
	cmd := &cobra.Command{
		Use:   "create NAME --provider openai_compatible|ollama|openrouter --model MODEL [flags]",
		Short: "Register a model endpoint (its key read from stdin or a prompt, never a flag)",
		Long: "create registers a model endpoint under the display name NAME and prints its id, which\n" +
			"agents and blocks name in their model. The daemon sends the endpoint a short test call\n" +
			"first: VALID says whether it answered (a model is saved either way).\n\n" +
			"With --api-key-stdin the key is asked for without echo on a terminal, or read from\n" +
			"stdin when it is piped (the whole of stdin, less one final line break). To pipe a key\n" +
			"kept in a variable, use printf: it is built into the shell, so the key shows in no\n" +
			"process list.",
		Example: "  abctl models create 'Team GPU' --provider openai_compatible --model qwen2.5-7b --api-base http://gpu:8000/v1\n" +
			"  abctl models create 'Local llama' --provider ollama --model llama3.2-vision\n" +
			"  printf '%s' \"$OPENROUTER_KEY\" | abctl models create Router --provider openrouter \\\n" +
			"      --model meta-llama/llama-3.1-70b-instruct --api-key-stdin --no-vision",
		Args: cmdutil.ExactArgs(1, "the model's display name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := &opts.Config
			c.DisplayName, c.Provider = args[0], client.CustomLLMProvider(strings.ToLower(strings.TrimSpace(provider)))
			set := func(flag string, v string) *string {
				if cmd.Flags().Changed(flag) {
					return &v
				}
				return nil
			}
			c.APIBase, c.APIVersion, c.ReasoningEffort = set("api-base", apiBase), set("api-version", apiVersion), set("reasoning-effort", effort)
			vision := !noVision
			c.SupportsVision = &vision
			if cmd.Flags().Changed("max-completion-tokens") {
				c.MaxCompletionTokens = &maxTokens
			}
			if cmd.Flags().Changed("temperature") {
				c.Temperature = &temperature
			}
			return cmdutil.Run(cmd, opts, runF, runCreate)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&provider, "provider", "", "openai_compatible (any server speaking OpenAI chat completions), ollama or openrouter (required)")
	_ = cmd.RegisterFlagCompletionFunc("provider", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return providers, cobra.ShellCompDirectiveNoFileComp
	})
	fl.StringVar(&opts.Config.ModelName, "model", "", "the model's name at the endpoint, such as qwen2.5-7b (required)")
	fl.StringVar(&apiBase, "api-base", "", "the API root, such as http://127.0.0.1:8000/v1 (required for openai_compatible)")
	fl.StringVar(&apiVersion, "api-version", "", "the API version, for endpoints that want one")
	fl.BoolVar(&opts.KeyFromStdin, "api-key-stdin", false, "read the API key at a prompt without echo, or from piped stdin")
	fl.BoolVar(&noVision, "no-vision", false, "the model reads no images: send it no screenshots")
	fl.IntVar(&maxTokens, "max-completion-tokens", 0, "cap each answer at this many tokens (1 to 1000000)")
	fl.Float64Var(&temperature, "temperature", 0, "sampling temperature, 0 to 2 (stored; the endpoint's default is used)")
	fl.StringVar(&effort, "reasoning-effort", "", "reasoning effort, for models that take one (stored)")
	printer.AddFlag(cmd, &opts.Format, printer.Table, printer.JSON, printer.YAML, printer.Name)
	return cmd
}

// Validate checks what can be checked before the key is asked for.
func (o *CreateOptions) Validate() error {
	c := o.Config
	switch {
	case strings.TrimSpace(c.DisplayName) == "":
		return cmdutil.UsageErrorf("the model's display name is empty: give the name it is listed under, e.g. 'Team GPU'")
	case c.Provider == "":
		return cmdutil.UsageErrorf("--provider is required: openai_compatible, ollama or openrouter")
	case !contains(providers, string(c.Provider)):
		return cmdutil.UsageErrorf("--provider %q is not one of openai_compatible, ollama or openrouter", c.Provider)
	case strings.TrimSpace(c.ModelName) == "":
		return cmdutil.UsageErrorf("--model is required: the model's name at the endpoint, such as qwen2.5-7b")
	case c.Provider == client.CustomLLMProviderOpenAICompatible && (c.APIBase == nil || *c.APIBase == ""):
		return cmdutil.UsageErrorf("an openai_compatible model needs --api-base, the root of its API (such as http://127.0.0.1:8000/v1)")
	}
	return nil
}

func contains(values []string, v string) bool {
	for _, x := range values {
		if x == v {
			return true
		}
	}
	return false
}

func runCreate(ctx context.Context, opts *CreateOptions) error {
	if opts.KeyFromStdin {
		key, err := readKey(ctx, opts.IO, opts.ReadHidden)
		if err != nil {
			return err
		}
		opts.Config.APIKey = &key
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	m, err := c.CustomLLMs.Create(ctx, &client.CustomLLMRequest{Config: opts.Config})
	if err != nil {
		return fmt.Errorf("create the custom model %q: %w", opts.Config.DisplayName, err)
	}
	if !m.Valid && opts.Format != printer.JSON && opts.Format != printer.YAML {
		fmt.Fprintf(opts.IO.ErrOut, "warning: the endpoint did not answer the test call (the daemon's log says why); %s is saved, and runs that name it will fail until it answers\n", m.ID)
	}
	return modelsListing([]*client.CustomLLM{m}, true).Print(opts.IO, opts.Now(), opts.Format)
}

// maxKey bounds the key read from stdin: the API takes up to 1000
// characters.
const maxKey = 4096

// readKey reads the API key: at a prompt without echo on a terminal, else
// the whole of stdin less one final line break. Its errors never hold it.
func readKey(ctx context.Context, ios *iostreams.IOStreams, readHidden func(context.Context, string) (string, error)) (string, error) {
	var key string
	if ios.IsStdinTTY() {
		v, err := readHidden(ctx, "API key: ")
		if err != nil {
			return "", fmt.Errorf("read the API key from the terminal: %w", err)
		}
		key = v
	} else {
		b, err := io.ReadAll(io.LimitReader(ios.In, maxKey+1))
		if err != nil {
			return "", fmt.Errorf("read the API key from stdin: %w", err)
		}
		if len(b) > maxKey {
			return "", cmdutil.UsageErrorf("stdin holds more than %d bytes: that is not an API key", maxKey)
		}
		key = cmdutil.TrimNewline(string(b))
	}
	if key == "" {
		return "", cmdutil.UsageErrorf("--api-key-stdin: the API key read is empty (pipe it in, e.g. printf '%%s' \"$KEY\" | abctl models create ...); nothing was stored")
	}
	if strings.ContainsAny(key, "\r\n") {
		return "", cmdutil.UsageErrorf("--api-key-stdin: the API key read holds a line break; nothing was stored")
	}
	return key, nil
}

// UpdateOptions are the inputs of `abctl models update`.
type UpdateOptions struct {
	IO         *iostreams.IOStreams
	Client     func(context.Context) (*client.Client, error)
	Now        func() time.Time
	ReadHidden func(ctx context.Context, prompt string) (string, error)

	ModelID string
	// Change sets the fields given as flags on the model's configuration.
	Change func(*client.CustomLLMConfig)
	// KeyFromStdin reads a new API key; RemoveKey removes the stored one.
	// Neither keeps it.
	KeyFromStdin, RemoveKey bool
	Format                  printer.Format
}

// NewCmdUpdate returns `abctl models update`. runF, when not nil, is
// called with the validated options instead of updating the model.
func NewCmdUpdate(f *cmdutil.Factory, runF func(*UpdateOptions) error) *cobra.Command {
	opts := &UpdateOptions{IO: f.IO, Client: f.Client, Now: f.Now, ReadHidden: cmdutil.HiddenReader(f.IO)}
	var name, provider, model, apiBase, apiVersion, effort string
	var vision bool
	var maxTokens int
	var temperature float64
	cmd := &cobra.Command{
		Use:   "update MODEL_ID [flags]",
		Short: "Change a custom model's settings or key (the key read from stdin or a prompt, never a flag)",
		Long: "update changes the settings given as flags and keeps the others, and the stored key\n" +
			"unless --api-key-stdin reads a new one or --remove-key removes it. The endpoint gets a\n" +
			"new test call: VALID says whether it answered.",
		Example: "  abctl models update cllm_123 --api-base http://gpu-2:8000/v1\n" +
			"  printf '%s' \"$NEW_KEY\" | abctl models update cllm_123 --api-key-stdin\n" +
			"  abctl models update cllm_123 --vision=false",
		Args: cmdutil.ExactArgs(1, "a model id (cllm_...)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := modelID(args[0])
			if err != nil {
				return cmdutil.UsageErrorf("%v", err)
			}
			opts.ModelID = id
			changed := cmd.Flags().Changed
			if changed("provider") && !contains(providers, provider) {
				return cmdutil.UsageErrorf("--provider %q is not one of openai_compatible, ollama or openrouter", provider)
			}
			if opts.KeyFromStdin && opts.RemoveKey {
				return cmdutil.UsageErrorf("--api-key-stdin and --remove-key cannot be used together")
			}
			opts.Change = func(c *client.CustomLLMConfig) {
				str := func(flag, v string, into **string) {
					if changed(flag) {
						*into = &v
					}
				}
				if changed("name") {
					c.DisplayName = name
				}
				if changed("provider") {
					c.Provider = client.CustomLLMProvider(provider)
				}
				if changed("model") {
					c.ModelName = model
				}
				str("api-base", apiBase, &c.APIBase)
				str("api-version", apiVersion, &c.APIVersion)
				str("reasoning-effort", effort, &c.ReasoningEffort)
				if changed("vision") {
					c.SupportsVision = &vision
				}
				if changed("max-completion-tokens") {
					c.MaxCompletionTokens = &maxTokens
				}
				if changed("temperature") {
					c.Temperature = &temperature
				}
			}
			return cmdutil.Run(cmd, opts, runF, runUpdate)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&name, "name", "", "a new display name")
	fl.StringVar(&provider, "provider", "", "openai_compatible, ollama or openrouter")
	_ = cmd.RegisterFlagCompletionFunc("provider", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return providers, cobra.ShellCompDirectiveNoFileComp
	})
	fl.StringVar(&model, "model", "", "the model's name at the endpoint")
	fl.StringVar(&apiBase, "api-base", "", "the API root, such as http://127.0.0.1:8000/v1")
	fl.StringVar(&apiVersion, "api-version", "", "the API version, for endpoints that want one")
	fl.BoolVar(&opts.KeyFromStdin, "api-key-stdin", false, "read a new API key at a prompt without echo, or from piped stdin")
	fl.BoolVar(&opts.RemoveKey, "remove-key", false, "remove the stored API key")
	fl.BoolVar(&vision, "vision", true, "whether the model is sent screenshots")
	fl.IntVar(&maxTokens, "max-completion-tokens", 0, "cap each answer at this many tokens (1 to 1000000)")
	fl.Float64Var(&temperature, "temperature", 0, "sampling temperature, 0 to 2 (stored)")
	fl.StringVar(&effort, "reasoning-effort", "", "reasoning effort, for models that take one (stored)")
	printer.AddFlag(cmd, &opts.Format, printer.Table, printer.JSON, printer.YAML, printer.Name)
	return cmd
}

func runUpdate(ctx context.Context, opts *UpdateOptions) error {
	var key *string
	switch {
	case opts.KeyFromStdin:
		k, err := readKey(ctx, opts.IO, opts.ReadHidden)
		if err != nil {
			return err
		}
		key = &k
	case opts.RemoveKey:
		key = new(string)
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	// The API replaces the whole configuration: start from the stored one.
	ms, err := c.CustomLLMs.List(ctx)
	if err != nil {
		return fmt.Errorf("list custom models: %w", err)
	}
	var cur *client.CustomLLM
	for _, m := range ms {
		if m.ID == opts.ModelID {
			cur = m
		}
	}
	if cur == nil {
		return fmt.Errorf("no custom model %s in this organization ('abctl models list' shows them)", opts.ModelID)
	}
	cfg := cur.Config
	opts.Change(&cfg)
	cfg.APIKey = key
	m, err := c.CustomLLMs.Update(ctx, opts.ModelID, &client.CustomLLMRequest{Config: cfg})
	if err != nil {
		return fmt.Errorf("update custom model %s: %w", opts.ModelID, err)
	}
	if !m.Valid && opts.Format != printer.JSON && opts.Format != printer.YAML {
		fmt.Fprintf(opts.IO.ErrOut, "warning: the endpoint did not answer the test call (the daemon's log says why); runs that name %s will fail until it answers\n", m.ID)
	}
	return modelsListing([]*client.CustomLLM{m}, true).Print(opts.IO, opts.Now(), opts.Format)
}

// DeleteOptions are the inputs of `abctl models delete`.
type DeleteOptions struct {
	IO      *iostreams.IOStreams
	Client  func(context.Context) (*client.Client, error)
	ModelID string
	Yes     bool
}

// NewCmdDelete returns `abctl models delete`. runF, when not nil, is
// called with the validated options instead of deleting.
func NewCmdDelete(f *cmdutil.Factory, runF func(*DeleteOptions) error) *cobra.Command {
	opts := &DeleteOptions{IO: f.IO, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "delete MODEL_ID",
		Short: "Delete a custom model (agents that name it fail to run)",
		Long: "delete removes a custom model and its key for good. Agents that name it keep their\n" +
			"definitions, and their runs fail before they start, naming the model.\n\n" +
			"It asks first on a terminal; elsewhere it needs --yes.",
		Example: "  abctl models delete cllm_123\n" +
			"  abctl models list -o name | xargs -n1 abctl models delete --yes",
		Args: cmdutil.ExactArgs(1, "a model id (cllm_...)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ModelID = args[0]
			return cmdutil.Run(cmd, opts, runF, runDelete)
		},
	}
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

// Validate reads the model id, and checks that the deletion can be
// confirmed: --yes, or a terminal to ask on.
func (o *DeleteOptions) Validate() error {
	id, err := modelID(o.ModelID)
	if err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	o.ModelID = id
	return cmdutil.CanConfirm(o.IO, o.Yes, "deleting a custom model cannot be undone")
}

func runDelete(ctx context.Context, opts *DeleteOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	return cmdutil.Deletion{IO: opts.IO, Yes: opts.Yes, Noun: "custom model", ID: opts.ModelID,
		Consequence: "Agents that name it will fail to run.",
		Delete:      func() error { return c.CustomLLMs.Delete(ctx, opts.ModelID) },
	}.Run()
}
