package credentials

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
)

// Fields are the parts of a credential that flags may carry: none of them
// a secret. An empty field was not given.
type Fields struct {
	// A password credential's.
	Username       string
	TOTPType       string
	TOTPIdentifier string
	// A credit card's.
	CardBrand      string
	CardHolderName string
	CardExpMonth   string
	CardExpYear    string
	BillingEmail   string
	BillingPhone   string
	// A secret's.
	SecretLabel string
}

// fieldFlag ties a flag to the field it fills and the kind of credential
// that has the field.
type fieldFlag struct {
	name  string
	typ   client.CredentialType
	value func(*Fields) *string
	usage string
}

// fieldFlags are the flags of the credential's fields, in the order help
// shows them. None is a secret: a flag's value stays in the shell's
// history and shows in the process list.
var fieldFlags = []fieldFlag{
	{"username", client.CredentialTypePassword, func(f *Fields) *string { return &f.Username }, "password: the username or e-mail address to log in with"},
	{"totp-type", client.CredentialTypePassword, func(f *Fields) *string { return &f.TOTPType },
		"password: the second factor: authenticator (its key is then read after the password, never a flag), email, text or none"},
	{"totp-identifier", client.CredentialTypePassword, func(f *Fields) *string { return &f.TOTPIdentifier },
		"password: the e-mail address or phone number that email or text codes are sent to"},
	{"card-brand", client.CredentialTypeCreditCard, func(f *Fields) *string { return &f.CardBrand }, "credit_card: the brand (visa, mastercard, amex, ...)"},
	{"card-holder-name", client.CredentialTypeCreditCard, func(f *Fields) *string { return &f.CardHolderName }, "credit_card: the name on the card"},
	{"card-exp-month", client.CredentialTypeCreditCard, func(f *Fields) *string { return &f.CardExpMonth }, "credit_card: the expiry month, 1 to 12"},
	{"card-exp-year", client.CredentialTypeCreditCard, func(f *Fields) *string { return &f.CardExpYear }, "credit_card: the expiry year (2028 or 28)"},
	{"billing-email", client.CredentialTypeCreditCard, func(f *Fields) *string { return &f.BillingEmail }, "credit_card: the billing e-mail address"},
	{"billing-phone", client.CredentialTypeCreditCard, func(f *Fields) *string { return &f.BillingPhone }, "credit_card: the billing phone number"},
	{"secret-label", client.CredentialTypeSecret, func(f *Fields) *string { return &f.SecretLabel }, "secret: a label that lists show (the value itself never shows)"},
}

func addFieldFlags(fs *pflag.FlagSet, fields *Fields) {
	for _, ff := range fieldFlags {
		fs.StringVar(ff.value(fields), ff.name, "", ff.usage)
	}
}

func registerFieldCompletions(cmd *cobra.Command) {
	_ = cmd.RegisterFlagCompletionFunc("totp-type", completeValues("authenticator", "email", "text", "none"))
	_ = cmd.RegisterFlagCompletionFunc("card-brand", completeValues("visa", "mastercard", "amex", "discover", "jcb", "unionpay", "diners"))
}

// given lists the field flags with a value.
func (f *Fields) given() []fieldFlag {
	var out []fieldFlag
	for _, ff := range fieldFlags {
		if *ff.value(f) != "" {
			out = append(out, ff)
		}
	}
	return out
}

// check refuses the field flags that are not t's, a second factor that
// is not one, and an identifier without e-mail or text codes.
func (f *Fields) check(t client.CredentialType) error {
	for _, ff := range f.given() {
		if ff.typ != t {
			return fmt.Errorf("--%s is for %s credentials, and this one is a %s credential (%s)", ff.name, ff.typ, t, flagsOf(t))
		}
	}
	switch client.TOTPType(f.TOTPType) {
	case "", client.TOTPTypeNone, client.TOTPTypeAuthenticator, client.TOTPTypeEmail, client.TOTPTypeText, client.TOTPTypePasskey:
	default:
		return fmt.Errorf("--totp-type %q is not a second factor: use authenticator, email, text or none", f.TOTPType)
	}
	if f.TOTPIdentifier != "" {
		if tt := client.TOTPType(f.TOTPType); tt != client.TOTPTypeEmail && tt != client.TOTPTypeText {
			return fmt.Errorf("--totp-identifier is where email or text codes are sent: add --totp-type email or --totp-type text")
		}
	}
	return nil
}

// flagsOf says what a credential of type t takes, for errors.
func flagsOf(t client.CredentialType) string {
	var names []string
	for _, ff := range fieldFlags {
		if ff.typ == t {
			names = append(names, "--"+ff.name)
		}
	}
	return "it takes " + strings.Join(names, ", ") + ", and " + strings.Join(secretNames(t), " and ") + " on stdin"
}

// secretNames names the secrets of a credential of type t.
func secretNames(t client.CredentialType) []string {
	switch t {
	case client.CredentialTypePassword:
		return []string{"the password (and the TOTP secret with --totp-type authenticator)"}
	case client.CredentialTypeCreditCard:
		return []string{"the card number", "the CVV"}
	}
	return []string{"the secret value"}
}

// CreateOptions are the inputs of `abctl credentials create`.
type CreateOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time
	// ReadHidden shows prompt on stderr and reads a line from the terminal
	// without echoing it: how secrets are asked for when stdin is a
	// terminal. NewCmdCreate sets it; tests replace it.
	ReadHidden func(ctx context.Context, prompt string) (string, error)

	Name string
	Type client.CredentialType
	// Fields are the non-secret fields given as flags.
	Fields Fields
	// FromFile is a YAML or JSON file holding every field of the
	// credential, its secrets with them ("-": stdin); "" reads the secrets
	// from stdin and takes the other fields from Fields.
	FromFile string
	Format   printer.Format
}

// NewCmdCreate returns `abctl credentials create`. runF, when not nil, is
// called with the validated options instead of creating the credential.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: f.IO, Client: f.Client, Now: f.Now, ReadHidden: cmdutil.HiddenReader(f.IO)}
	var typ string
	cmd := &cobra.Command{
		Use:   "create NAME --type password|credit_card|secret [flags]",
		Short: "Store a login, a payment card or a secret (its secret read from stdin, never a flag)",
		Long: "create stores a credential under NAME and prints its id. The secrets are never flags:\n\n" +
			"  - on a terminal, create asks for each one without echoing what you type;\n" +
			"  - otherwise it reads them from stdin, one a line, in this order:\n" +
			"      password:     the password, then the TOTP secret when --totp-type is authenticator\n" +
			"      credit_card:  the card number, then the CVV\n" +
			"      secret:       the secret value (the whole of stdin, so it may span lines)\n" +
			"  - or --from-file reads every field, secrets included, from a YAML or JSON file\n" +
			"    (\"-\" for stdin) whose keys are the API's: username, password, totp, totp_type,\n" +
			"    totp_identifier; card_number, card_cvv, card_exp_month, card_exp_year, card_brand,\n" +
			"    card_holder_name, billing_address, billing_email, billing_phone; secret_value,\n" +
			"    secret_label. Keep such a file readable by you alone (chmod 600).\n\n" +
			"To pipe a secret kept in a variable, use printf: it is built into the shell, so the\n" +
			"secret shows in no process list, as the arguments of another program would.",
		Example: "  # a login; the password is asked for, or piped:\n" +
			"  abctl credentials create 'Shop login' --type password --username ada@example.com\n" +
			"  printf '%s' \"$SHOP_PASSWORD\" | abctl credentials create 'Shop login' --type password --username ada@example.com\n\n" +
			"  # a login with an authenticator app's secret, one a line:\n" +
			"  printf '%s\\n' \"$PASSWORD\" \"$TOTP_SECRET\" | abctl credentials create Bank --type password \\\n" +
			"      --username ada --totp-type authenticator\n\n" +
			"  # a login whose codes come by e-mail (push them with 'abctl credentials totp send'):\n" +
			"  abctl credentials create Portal --type password --username ada --totp-type email --totp-identifier ada@example.com\n\n" +
			"  # a card: number, then CVV\n" +
			"  printf '%s\\n' \"$CARD_NUMBER\" \"$CARD_CVV\" | abctl credentials create 'Company card' --type credit_card \\\n" +
			"      --card-brand visa --card-holder-name 'Ada Lovelace' --card-exp-month 12 --card-exp-year 2028\n\n" +
			"  # a secret, from a file of your own\n" +
			"  abctl credentials create 'Billing API' --type secret --secret-label 'API key' < ~/.secrets/billing-key\n" +
			"  abctl credentials create 'Company card' --type credit_card --from-file card.yaml",
		Args: cmdutil.ExactArgs(1, "the credential's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := parseType(typ)
			if err != nil {
				return cmdutil.UsageErrorf("%v", err)
			}
			opts.Name, opts.Type = args[0], t
			return cmdutil.Run(cmd, opts, runF, runCreate)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&typ, "type", "", "the kind of credential: password (a login), credit_card or secret (required)")
	_ = cmd.RegisterFlagCompletionFunc("type", completeValues(credentialTypes...))
	addFieldFlags(fl, &opts.Fields)
	registerFieldCompletions(cmd)
	fl.StringVar(&opts.FromFile, "from-file", "", "read every field, secrets included, from this YAML or JSON file (\"-\": stdin)")
	printer.AddFlag(cmd, &opts.Format, printer.Name, printer.Table, printer.JSON, printer.YAML)
	return cmd
}

// Validate checks the name, and that the fields given fit the type and
// are all there (unless a file gives them): before any secret is asked for.
func (o *CreateOptions) Validate() error {
	if strings.TrimSpace(o.Name) == "" {
		return cmdutil.UsageErrorf("the credential's name is empty: give the name it is listed under, e.g. 'Shop login'")
	}
	if err := checkFields(o.Type, &o.Fields, o.FromFile, o.IO); err != nil {
		return err
	}
	if o.FromFile == "" {
		if missing := missingFieldFlags(o.Type, &o.Fields); len(missing) > 0 {
			return cmdutil.UsageErrorf("a %s credential needs %s", o.Type, strings.Join(missing, " and "))
		}
	}
	return nil
}

// checkFields is what create and update check of the field flags and
// --from-file, the type known.
func checkFields(t client.CredentialType, fields *Fields, fromFile string, ios *iostreams.IOStreams) error {
	if err := fields.check(t); err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	if fromFile != "" {
		if given := fields.given(); len(given) > 0 {
			return cmdutil.UsageErrorf("--from-file gives every field of the credential: put %s in the file rather than --%s", fileKey(given[0].name), given[0].name)
		}
		if fromFile == "-" && ios.IsStdinTTY() {
			return cmdutil.UsageErrorf("--from-file - reads the file from stdin, which is a terminal here (what you typed would show): pipe the file in, or give its path")
		}
	}
	return nil
}

// fileKey is the file's key of a field flag: --card-exp-month is
// card_exp_month.
func fileKey(flag string) string { return strings.ReplaceAll(flag, "-", "_") }

// missingFieldFlags lists the required field flags of type t that have no
// value.
func missingFieldFlags(t client.CredentialType, f *Fields) []string {
	var missing []string
	switch t {
	case client.CredentialTypePassword:
		if f.Username == "" {
			missing = append(missing, "--username")
		}
	case client.CredentialTypeCreditCard:
		for _, m := range []struct{ flag, v string }{
			{"--card-brand", f.CardBrand}, {"--card-holder-name", f.CardHolderName},
			{"--card-exp-month", f.CardExpMonth}, {"--card-exp-year", f.CardExpYear},
		} {
			if m.v == "" {
				missing = append(missing, m.flag)
			}
		}
	}
	return missing
}

func runCreate(ctx context.Context, opts *CreateOptions) error {
	src := secretSource{io: opts.IO, readHidden: opts.ReadHidden}
	data, err := buildData(ctx, opts.Type, &opts.Fields, opts.FromFile, src)
	if err != nil {
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	cr, err := c.Credentials.Create(ctx, &client.CredentialRequest{Name: opts.Name, CredentialType: opts.Type, Credential: data})
	if err != nil {
		return fmt.Errorf("create the credential %q: %w", opts.Name, err)
	}
	return credentialsListing([]*client.Credential{cr}, true).Print(opts.IO, opts.Now(), opts.Format)
}

// buildData makes the data of a credential of type t: from the file, or
// from the field flags and the secrets read from src; then checks it.
func buildData(ctx context.Context, t client.CredentialType, fields *Fields, fromFile string, src secretSource) (client.CredentialData, error) {
	if fromFile != "" {
		return readDataFile(t, fromFile, src.io)
	}
	var data client.CredentialData
	switch t {
	case client.CredentialTypePassword:
		p := &client.PasswordCredential{Username: fields.Username, TOTPType: client.TOTPType(fields.TOTPType), TOTPIdentifier: fields.TOTPIdentifier}
		asks := []secretAsk{{what: "the password", prompt: fmt.Sprintf("Password for %s: ", fields.Username), into: &p.Password}}
		if p.TOTPType == client.TOTPTypeAuthenticator {
			asks = append(asks, secretAsk{what: "the TOTP secret", prompt: "TOTP secret (the key, or otpauth:// link, the site showed when you set up an authenticator app): ", into: &p.TOTP})
		}
		if err := src.read(ctx, asks); err != nil {
			return nil, err
		}
		data = p
	case client.CredentialTypeCreditCard:
		cc := &client.CreditCardCredential{CardBrand: fields.CardBrand, CardHolderName: fields.CardHolderName,
			CardExpMonth: fields.CardExpMonth, CardExpYear: fields.CardExpYear, BillingEmail: fields.BillingEmail, BillingPhone: fields.BillingPhone}
		if err := src.read(ctx, []secretAsk{
			{what: "the card number", prompt: "Card number: ", into: &cc.CardNumber},
			{what: "the CVV", prompt: "CVV (the 3 or 4 digits printed on the card): ", into: &cc.CardCVV},
		}); err != nil {
			return nil, err
		}
		data = cc
	default:
		s := &client.SecretCredential{SecretLabel: fields.SecretLabel}
		if err := src.read(ctx, []secretAsk{{what: "the secret value", prompt: "Secret value: ", into: &s.SecretValue, whole: true}}); err != nil {
			return nil, err
		}
		data = s
	}
	if err := checkData(data, flagNames); err != nil {
		return nil, err
	}
	return data, nil
}

// UpdateOptions are the inputs of `abctl credentials update`.
type UpdateOptions struct {
	IO         *iostreams.IOStreams
	Client     func(context.Context) (*client.Client, error)
	Now        func() time.Time
	ReadHidden func(ctx context.Context, prompt string) (string, error)

	// CredentialID is the credential to replace, without the credential/
	// of -o name.
	CredentialID string
	// Name renames the credential; "" keeps its name.
	Name string
	// Fields are the non-secret fields given as flags; those the service
	// shows (a username, a second factor, a card's brand, a label) are
	// kept when not given.
	Fields   Fields
	FromFile string
	Format   printer.Format
}

// NewCmdUpdate returns `abctl credentials update`. runF, when not nil, is
// called with the validated options instead of replacing the credential.
func NewCmdUpdate(f *cmdutil.Factory, runF func(*UpdateOptions) error) *cobra.Command {
	opts := &UpdateOptions{IO: f.IO, Client: f.Client, Now: f.Now, ReadHidden: cmdutil.HiddenReader(f.IO)}
	cmd := &cobra.Command{
		Use:   "update CREDENTIAL_ID [flags]",
		Short: "Replace a credential's secret (and fields), keeping its id",
		Long: "update replaces a credential's data under the same id, so agents that use it need no\n" +
			"change: change a password, renew a card. Its kind cannot change.\n\n" +
			"The secrets are read as create reads them (a prompt without echo, stdin, or\n" +
			"--from-file), and must all be given again. The fields the service shows are kept\n" +
			"unless given: a login's username and second factor, a card's brand, a secret's label.\n" +
			"A card's holder name and expiry are not shown, so they must be given again too.",
		Example: "  printf '%s' \"$NEW_PASSWORD\" | abctl credentials update cred_123\n" +
			"  abctl credentials update cred_123 --name 'Shop login (old)'",
		Args: cmdutil.ExactArgs(1, "a credential id (cred_...)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.CredentialID = args[0]
			return cmdutil.Run(cmd, opts, runF, runUpdate)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Name, "name", "", "a new name (default: keep the name)")
	addFieldFlags(fl, &opts.Fields)
	registerFieldCompletions(cmd)
	fl.StringVar(&opts.FromFile, "from-file", "", "read every field, secrets included, from this YAML or JSON file (\"-\": stdin)")
	printer.AddFlag(cmd, &opts.Format, printer.Name, printer.Table, printer.JSON, printer.YAML)
	return cmd
}

// Validate reads the credential id. The fields are checked once the
// credential's kind is known.
func (o *UpdateOptions) Validate() error {
	id, err := kind.ID(o.CredentialID)
	if err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	o.CredentialID = id
	if o.FromFile == "-" && o.IO.IsStdinTTY() {
		return cmdutil.UsageErrorf("--from-file - reads the file from stdin, which is a terminal here (what you typed would show): pipe the file in, or give its path")
	}
	return nil
}

func runUpdate(ctx context.Context, opts *UpdateOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	id := opts.CredentialID
	old, err := c.Credentials.Get(ctx, id)
	if err != nil {
		return fmt.Errorf("get credential %s: %w", id, err)
	}
	t := old.CredentialType
	fields := opts.Fields
	if err := checkFields(t, &fields, opts.FromFile, opts.IO); err != nil {
		return err
	}
	if opts.FromFile == "" {
		keepShownFields(old, &fields)
		if missing := missingFieldFlags(t, &fields); len(missing) > 0 {
			return cmdutil.UsageErrorf("credential %s is a %s credential: its data is replaced as a whole, and it needs %s again", id, t, strings.Join(missing, " and "))
		}
	}
	src := secretSource{io: opts.IO, readHidden: opts.ReadHidden}
	data, err := buildData(ctx, t, &fields, opts.FromFile, src)
	if err != nil {
		return err
	}
	name := opts.Name
	if name == "" {
		name = old.Name
	}
	cr, err := c.Credentials.Update(ctx, id, &client.CredentialRequest{Name: name, CredentialType: t, Credential: data})
	if err != nil {
		return fmt.Errorf("update credential %s: %w", id, err)
	}
	return credentialsListing([]*client.Credential{cr}, true).Print(opts.IO, opts.Now(), opts.Format)
}

// keepShownFields fills the fields not given with what the service shows
// of the credential.
func keepShownFields(old *client.Credential, f *Fields) {
	info := old.Credential
	switch old.CredentialType {
	case client.CredentialTypePassword:
		if f.Username == "" {
			f.Username = info.Username
		}
		if f.TOTPType == "" {
			f.TOTPType = string(info.TOTPType)
			if f.TOTPIdentifier == "" && info.TOTPIdentifier != nil {
				f.TOTPIdentifier = *info.TOTPIdentifier
			}
		}
		if f.TOTPType == string(client.TOTPTypeNone) {
			f.TOTPType = ""
		}
	case client.CredentialTypeCreditCard:
		if f.CardBrand == "" {
			f.CardBrand = info.Brand
		}
	case client.CredentialTypeSecret:
		if f.SecretLabel == "" && info.SecretLabel != nil {
			f.SecretLabel = *info.SecretLabel
		}
	}
}
