// Package credentials is `abctl credentials`: store the passwords, payment
// cards and secrets that agents log in and pay with, list, show and delete
// them, and push the one-time codes that runs wait for.
//
// A secret (a password, an authenticator's TOTP secret, a card number and
// its CVV, a secret value) never comes from the command line, where the
// shell's history and the process list would keep it. It is typed at a
// prompt that does not echo when stdin is a terminal, piped on stdin
// otherwise (one secret a line), or read with the other fields from a YAML
// or JSON file (--from-file). No flag carries one, and a test checks that
// none ever does.
package credentials

import (
	"context"
	"fmt"
	"iter"
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

// NewCmdCredentials returns `abctl credentials`.
func NewCmdCredentials(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "credentials",
		Aliases: []string{"credential", "creds"},
		Short:   "Store passwords, cards and secrets for agents; push one-time codes",
		Long: "A credential is a login (username, password and an optional second factor), a payment\n" +
			"card or a single secret, kept by the service for agents to use. Its secret goes in once\n" +
			"and never comes back: list and get show a username, a card's last four digits, a label.\n\n" +
			"Secrets are never taken from flags (the shell's history would keep them): create and\n" +
			"update prompt for them without echo on a terminal, read them from stdin when it is\n" +
			"piped (one a line), or read every field from a file with --from-file.\n\n" +
			"CREDENTIAL_ID is an id (cred_...) or credential/ID, as -o name prints it.",
		Example: "  printf '%s' \"$SHOP_PASSWORD\" | abctl credentials create 'Shop login' --type password --username ada@example.com\n" +
			"  abctl credentials list --type password\n" +
			"  abctl credentials delete cred_123 --yes\n" +
			"  abctl credentials totp send ada@example.com 'Your code is 123456'",
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdCreate(f, nil), NewCmdUpdate(f, nil), NewCmdList(f, nil), NewCmdGet(f, nil),
		NewCmdDelete(f, nil), NewCmdTOTP(f))
	return cmd
}

// kind is how -o name prints a credential: credential/ID.
const kind = resource.Credential

// parseType reads the value of --type.
func parseType(s string) (client.CredentialType, error) {
	switch t := client.CredentialType(strings.ToLower(strings.TrimSpace(s))); t {
	case client.CredentialTypePassword, client.CredentialTypeCreditCard, client.CredentialTypeSecret:
		return t, nil
	case "":
		return "", fmt.Errorf("--type is required: password (a login), credit_card or secret")
	}
	return "", fmt.Errorf("--type %q is not a kind of credential: use password (a login), credit_card or secret", s)
}

var credentialTypes = []string{"password", "credit_card", "secret"}

func completeValues(values ...string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// credentialsListing shows credentials: ID, NAME, TYPE and DETAILS (what
// the service shows of the data, never a secret). single means one was
// asked for by id, which JSON and YAML then show alone.
func credentialsListing(creds []*client.Credential, single bool) printer.Listing {
	if creds == nil {
		creds = []*client.Credential{}
	}
	l := printer.Listing{Value: listing.One(creds, single), Headers: []string{"id", "name", "type", "details"}}
	for _, c := range creds {
		l.Names = append(l.Names, kind.Name(c.CredentialID))
	}
	l.Rows = func(t *printer.TablePrinter) {
		for _, c := range creds {
			t.AddRow(c.CredentialID, c.Name, string(c.CredentialType), details(c))
		}
	}
	return l
}

// details is the DETAILS cell: a login's username (and its second factor),
// a card's last four digits and brand, a secret's label.
func details(c *client.Credential) string {
	info := c.Credential
	switch {
	case c.CredentialType == client.CredentialTypeCreditCard || info.LastFour != "":
		return strings.TrimSpace("•••• " + info.LastFour + " " + info.Brand)
	case c.CredentialType == client.CredentialTypePassword || info.Username != "":
		s := info.Username
		switch info.TOTPType {
		case "", client.TOTPTypeNone:
		case client.TOTPTypeEmail, client.TOTPTypeText:
			s += " (2FA: " + string(info.TOTPType)
			if info.TOTPIdentifier != nil && *info.TOTPIdentifier != "" {
				s += " to " + *info.TOTPIdentifier
			}
			s += ")"
		default:
			s += " (2FA: " + string(info.TOTPType) + ")"
		}
		return s
	case info.SecretLabel != nil:
		return *info.SecretLabel
	}
	return ""
}

// ListOptions are the inputs of `abctl credentials list`.
type ListOptions struct {
	listing.ListOptions

	// Type lists one kind of credential; "" lists all.
	Type   client.CredentialType
	Search string
}

// NewCmdList returns `abctl credentials list`. runF, when not nil, is
// called with the validated options instead of listing.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{}
	var typ string
	cmd := listing.NewListCmd(f, &opts.ListOptions, "credentials", &cobra.Command{
		Use:   "list",
		Short: "List credentials, newest first (never their secrets)",
		Example: "  abctl credentials list\n" +
			"  abctl credentials list --type credit_card -o json\n" +
			"  abctl credentials list --search shop -o name",
	}, func(cmd *cobra.Command, _ []string) error {
		opts.Type = ""
		if cmd.Flags().Changed("type") {
			t, err := parseType(typ)
			if err != nil {
				return cmdutil.UsageErrorf("%v", err)
			}
			opts.Type = t
		}
		return cmdutil.Run(cmd, opts, runF, runList)
	})
	cmd.Flags().StringVar(&typ, "type", "", "only credentials of this kind: password, credit_card or secret")
	_ = cmd.RegisterFlagCompletionFunc("type", completeValues(credentialTypes...))
	cmd.Flags().StringVar(&opts.Search, "search", "", "only credentials whose name (or username, label, card) contains this text")
	return cmd
}

// Validate checks the limit and the search text.
func (o *ListOptions) Validate() error {
	if err := o.ListOptions.Validate(); err != nil {
		return err
	}
	if n := len([]rune(o.Search)); n > 200 {
		return cmdutil.UsageErrorf("--search is %d characters long; the service takes at most 200", n)
	}
	return nil
}

func runList(ctx context.Context, opts *ListOptions) error {
	creds, err := listing.Read(ctx, &opts.ListOptions, "credentials", func(c *client.Client, pageSize int) iter.Seq2[*client.Credential, error] {
		return c.Credentials.All(ctx, &client.ListCredentialsOptions{CredentialType: opts.Type, Search: opts.Search, PageSize: pageSize})
	})
	if err != nil {
		return err
	}
	return opts.Print(credentialsListing(creds, false))
}

// GetOptions are the inputs of `abctl credentials get`: the credentials to
// show, by id.
type GetOptions = listing.GetOptions

var getter = listing.Getter[*client.Credential]{
	Kind: kind,
	Noun: "credential",
	Get: func(ctx context.Context, c *client.Client, id string) (*client.Credential, error) {
		return c.Credentials.Get(ctx, id)
	},
	Show: func(creds []*client.Credential, single bool, _ time.Time) printer.Listing {
		return credentialsListing(creds, single)
	},
}

// NewCmdGet returns `abctl credentials get`. runF, when not nil, is called
// with the validated options instead of reading the credentials.
func NewCmdGet(f *cmdutil.Factory, runF func(*GetOptions) error) *cobra.Command {
	return getter.NewCmd(f, &cobra.Command{
		Use:     "get CREDENTIAL_ID...",
		Short:   "Show credentials by id (never their secrets)",
		Example: "  abctl credentials get cred_123 -o yaml",
		Args:    cmdutil.MinArgs(1, "one or more credential ids (cred_...)"),
	}, runF)
}

func runGet(ctx context.Context, opts *GetOptions) error { return getter.Run(ctx, opts) }

// DeleteOptions are the inputs of `abctl credentials delete`.
type DeleteOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)

	// CredentialID is the credential to delete, without the credential/
	// of -o name.
	CredentialID string
	Yes          bool
}

// NewCmdDelete returns `abctl credentials delete`. runF, when not nil, is
// called with the validated options instead of deleting.
func NewCmdDelete(f *cmdutil.Factory, runF func(*DeleteOptions) error) *cobra.Command {
	opts := &DeleteOptions{IO: f.IO, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "delete CREDENTIAL_ID",
		Short: "Delete a credential (agents that use it fail when they need it)",
		Long: "delete removes a credential and its secret for good. Agents that name it keep their\n" +
			"definitions, and their runs fail when they need it.\n\n" +
			"It asks first on a terminal; elsewhere it needs --yes.",
		Example: "  abctl credentials delete cred_123\n" +
			"  abctl credentials list --search old -o name | xargs -n1 abctl credentials delete --yes",
		Args: cmdutil.ExactArgs(1, "a credential id (cred_...)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.CredentialID = args[0]
			return cmdutil.Run(cmd, opts, runF, runDelete)
		},
	}
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

// Validate reads the credential id, and checks that the deletion can be
// confirmed: --yes, or a terminal to ask on.
func (o *DeleteOptions) Validate() error {
	id, err := kind.ID(o.CredentialID)
	if err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	o.CredentialID = id
	return cmdutil.CanConfirm(o.IO, o.Yes, "deleting a credential cannot be undone")
}

func runDelete(ctx context.Context, opts *DeleteOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	id := opts.CredentialID
	return cmdutil.Deletion{IO: opts.IO, Yes: opts.Yes, Noun: "credential", ID: id,
		Consequence: "Agents that use it will fail when they need it.",
		Describe: func() (string, error) {
			cr, err := c.Credentials.Get(ctx, id)
			if err != nil {
				return "", err
			}
			return describe(cr), nil
		},
		Delete: func() error { return c.Credentials.Delete(ctx, id) },
	}.Run()
}

// describe names a credential in messages: its id, name, type and details.
func describe(c *client.Credential) string {
	s := fmt.Sprintf("%s (%q, %s", c.CredentialID, c.Name, c.CredentialType)
	if d := details(c); d != "" {
		s += ", " + d
	}
	return s + ")"
}
