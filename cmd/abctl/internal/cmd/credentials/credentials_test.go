package credentials

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
)

// fakeService answers the credential routes a test registers and records
// every request it receives.
type fakeService struct {
	t    *testing.T
	mux  *http.ServeMux
	mu   sync.Mutex
	reqs []seenRequest
	c    *client.Client
}

type seenRequest struct {
	Method, Path string
	Query        map[string][]string
	Body         string
}

func newFake(t *testing.T) *fakeService {
	t.Helper()
	fs := &fakeService{t: t, mux: http.NewServeMux()}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fs.mu.Lock()
		fs.reqs = append(fs.reqs, seenRequest{r.Method, r.URL.Path, r.URL.Query(), string(b)})
		fs.mu.Unlock()
		fs.mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.WithBaseURL(srv.URL), client.WithAPIKey("abk_test"), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	fs.c = c
	return fs
}

func (fs *fakeService) reply(pattern string, status int, body string) {
	fs.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	})
}

func (fs *fakeService) client(context.Context) (*client.Client, error) { return fs.c, nil }

func (fs *fakeService) requests() []seenRequest {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]seenRequest(nil), fs.reqs...)
}

// last is the last request of method and path.
func (fs *fakeService) last(method, path string) seenRequest {
	fs.t.Helper()
	reqs := fs.requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Method == method && reqs[i].Path == path {
			return reqs[i]
		}
	}
	fs.t.Fatalf("no %s %s among %+v", method, path, reqs)
	return seenRequest{}
}

func assertJSON(t *testing.T, what, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", what, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: the expected text is not JSON: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, got, strings.Join(strings.Fields(want), " "))
	}
}

// The replies carry every member of the service's answer, so that -o json
// can be compared with them.
const (
	rest          = `"vault_type":"skyvern","browser_profile_id":null,"tested_url":null,"user_context":null,"save_browser_session_intent":null,"folder_id":null,"proxy_location":null,"proxy_session_id":null}`
	passwordReply = `{"credential_id":"cred_1","credential":{"username":"ada@example.com","totp_type":"email","totp_identifier":"ada@example.com"},"credential_type":"password","name":"Shop login",` + rest
	cardReply     = `{"credential_id":"cred_2","credential":{"last_four":"4242","brand":"visa"},"credential_type":"credit_card","name":"Company card",` + rest
	secretReply   = `{"credential_id":"cred_3","credential":{"secret_label":"API key"},"credential_type":"secret","name":"Billing API",` + rest
)

// secretsFlags are names a flag carrying a secret would have.
var secretFlags = []string{"password", "totp", "totp-secret", "card-number", "number", "card-cvv", "cvv", "secret", "secret-value", "value", "pin"}

// TestNoFlagCarriesASecret walks every command of the group: none has a
// flag a secret could be given with, and such a flag is refused as
// unknown.
func TestNoFlagCarriesASecret(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			for _, bad := range secretFlags {
				if fl.Name == bad {
					t.Errorf("%s has a flag --%s: secrets must not be flags", c.CommandPath(), fl.Name)
				}
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewCmdCredentials(f))

	for _, args := range [][]string{
		{"Shop", "--type", "password", "--username", "ada", "--password", "hunter2"},
		{"Card", "--type", "credit_card", "--card-number", "4242424242424242"},
		{"Card", "--type", "credit_card", "--cvv", "123"},
		{"Key", "--type", "secret", "--secret-value", "sk_1"},
		{"Bank", "--type", "password", "--username", "ada", "--totp", "JBSWY3DPEHPK3PXP"},
	} {
		err := cmdtest.Exec(NewCmdCreate(f, func(*CreateOptions) error { t.Error("ran"); return nil }), args...)
		if !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "unknown flag") {
			t.Errorf("create %q: %v, want the usage error of an unknown flag", args, err)
		}
	}
	err := cmdtest.Exec(NewCmdUpdate(f, func(*UpdateOptions) error { t.Error("ran"); return nil }), "cred_1", "--password", "x")
	if !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "unknown flag: --password") {
		t.Errorf("update --password: %v", err)
	}
}

func TestCreateOptions(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var got *CreateOptions
	run := func(args ...string) error {
		got = nil
		return cmdtest.Exec(NewCmdCreate(f, func(o *CreateOptions) error { got = o; return nil }), args...)
	}
	if err := run("Shop login", "--type", "password", "--username", "ada@example.com", "--totp-type", "email", "--totp-identifier", "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	if got.Name != "Shop login" || got.Type != client.CredentialTypePassword || got.Fields.Username != "ada@example.com" ||
		got.Fields.TOTPType != "email" || got.Fields.TOTPIdentifier != "ada@example.com" || got.Format != printer.Name || got.ReadHidden == nil {
		t.Errorf("options %+v", got)
	}
	if err := run("Card", "--type", "CREDIT_CARD", "--card-brand", "visa", "--card-holder-name", "Ada", "--card-exp-month", "12", "--card-exp-year", "2028", "-o", "json"); err != nil ||
		got.Type != client.CredentialTypeCreditCard || got.Fields.CardBrand != "visa" || got.Format != printer.JSON {
		t.Errorf("a card: %+v %v", got, err)
	}
	if err := run("Key", "--type", "secret", "--from-file", "key.yaml"); err != nil || got.FromFile != "key.yaml" {
		t.Errorf("--from-file: %+v %v", got, err)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"Shop", "--username", "ada"}, "--type is required: password (a login), credit_card or secret"},
		{[]string{"Shop", "--type", "login"}, `--type "login" is not a kind of credential`},
		{[]string{" ", "--type", "secret"}, "the credential's name is empty"},
		{[]string{"Shop", "--type", "password"}, "a password credential needs --username"},
		{[]string{"Card", "--type", "credit_card", "--card-brand", "visa"}, "a credit_card credential needs --card-holder-name and --card-exp-month and --card-exp-year"},
		{[]string{"Key", "--type", "secret", "--username", "ada"}, "--username is for password credentials, and this one is a secret credential (it takes --secret-label, and the secret value on stdin)"},
		{[]string{"Shop", "--type", "password", "--username", "ada", "--card-brand", "visa"}, "--card-brand is for credit_card credentials"},
		{[]string{"Shop", "--type", "password", "--username", "ada", "--totp-type", "sms"}, `--totp-type "sms" is not a second factor`},
		{[]string{"Shop", "--type", "password", "--username", "ada", "--totp-identifier", "ada@example.com"}, "add --totp-type email or --totp-type text"},
		{[]string{"Shop", "--type", "password", "--username", "ada", "--from-file", "x.yaml"}, "put username in the file rather than --username"},
		{[]string{"Shop", "--type", "password", "-o", "wide"}, `-o "wide" is not a format`},
		{[]string{"--type", "secret"}, "takes the credential's name"},
	} {
		if err := run(tc.args...); got != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("create %q: %v, want the usage error %q", tc.args, err, tc.want)
		}
	}

	// --from-file - on a terminal would echo the secrets.
	f.IO.SetTTY(true, false, true)
	if err := run("Key", "--type", "secret", "--from-file", "-"); !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "which is a terminal here") {
		t.Errorf("--from-file - on a terminal: %v", err)
	}
}

// create runs `abctl credentials create args...` against fs with stdin.
func create(t *testing.T, fs *fakeService, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	f, streams := cmdtest.NewFactory(t, nil)
	streams.In.WriteString(stdin)
	err = cmdtest.Exec(NewCmdCreate(f, func(o *CreateOptions) error {
		o.Client = fs.client
		o.ReadHidden = func(context.Context, string) (string, error) {
			t.Error("prompted although stdin is not a terminal")
			return "", io.EOF
		}
		return runCreate(t.Context(), o)
	}), args...)
	return streams.Out.String(), streams.ErrOut.String(), err
}

// TestCreateReadsSecretsFromStdin: piped stdin gives the secrets, one a
// line, and they reach the service, and nothing else: not stdout, not
// stderr.
func TestCreateReadsSecretsFromStdin(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stdin  string
		args   []string
		reply  string
		want   string // the request body
		secret []string
	}{
		{
			name: "password", stdin: "hunter2 with spaces \n", reply: passwordReply,
			args:   []string{"Shop login", "--type", "password", "--username", "ada@example.com"},
			want:   `{"name":"Shop login","credential_type":"password","credential":{"username":"ada@example.com","password":"hunter2 with spaces "}}`,
			secret: []string{"hunter2"},
		},
		{
			name: "password without a newline", stdin: "hunter2", reply: passwordReply,
			args: []string{"Shop login", "--type", "password", "--username", "ada@example.com", "--totp-type", "email", "--totp-identifier", "ada@example.com"},
			want: `{"name":"Shop login","credential_type":"password","credential":{"username":"ada@example.com","password":"hunter2",
				"totp_type":"email","totp_identifier":"ada@example.com"}}`,
			secret: []string{"hunter2"},
		},
		{
			// The TOTP secret as sites print it: grouped, lower case.
			name: "password and authenticator", stdin: "hunter2\r\njbsw y3dp ehpk 3pxp\r\n", reply: passwordReply,
			args: []string{"Bank", "--type", "password", "--username", "ada", "--totp-type", "authenticator"},
			want: `{"name":"Bank","credential_type":"password","credential":{"username":"ada","password":"hunter2",
				"totp":"JBSWY3DPEHPK3PXP","totp_type":"authenticator"}}`,
			secret: []string{"hunter2", "JBSWY3DPEHPK3PXP", "jbsw"},
		},
		{
			name: "credit card", stdin: "4242 4242 4242 4242\n042\n", reply: cardReply,
			args: []string{"Company card", "--type", "credit_card", "--card-brand", "visa", "--card-holder-name", "Ada Lovelace",
				"--card-exp-month", "12", "--card-exp-year", "2028", "--billing-email", "billing@example.com"},
			want: `{"name":"Company card","credential_type":"credit_card","credential":{"card_number":"4242424242424242","card_cvv":"042",
				"card_exp_month":"12","card_exp_year":"2028","card_brand":"visa","card_holder_name":"Ada Lovelace","billing_email":"billing@example.com"}}`,
			secret: []string{"4242 4242", "4242424242424242", "042"},
		},
		{
			// A secret is the whole of stdin, line breaks within kept.
			name: "secret", stdin: "-----BEGIN KEY-----\nabc\n-----END KEY-----\n", reply: secretReply,
			args:   []string{"Billing API", "--type", "secret", "--secret-label", "API key"},
			want:   `{"name":"Billing API","credential_type":"secret","credential":{"secret_value":"-----BEGIN KEY-----\nabc\n-----END KEY-----","secret_label":"API key"}}`,
			secret: []string{"BEGIN KEY"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := newFake(t)
			fs.reply("POST /v1/credentials", http.StatusCreated, tc.reply)
			stdout, stderr, err := create(t, fs, tc.stdin, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			assertJSON(t, "request", fs.last("POST", "/v1/credentials").Body, tc.want)
			if !strings.HasPrefix(stdout, "credential/cred_") || strings.Count(stdout, "\n") != 1 {
				t.Errorf("stdout %q, want one credential/ID line", stdout)
			}
			for _, s := range tc.secret {
				if strings.Contains(stdout+stderr, s) {
					t.Errorf("the secret %q shows in the output: stdout %q, stderr %q", s, stdout, stderr)
				}
			}
		})
	}
}

// TestCreateStdinErrors: stdin that does not hold what is needed is
// refused before anything is sent, and the error says what was expected
// without repeating what was read.
func TestCreateStdinErrors(t *testing.T) {
	password := []string{"Shop", "--type", "password", "--username", "ada"}
	authenticator := []string{"Bank", "--type", "password", "--username", "ada", "--totp-type", "authenticator"}
	card := []string{"Card", "--type", "credit_card", "--card-brand", "visa", "--card-holder-name", "Ada", "--card-exp-month", "12", "--card-exp-year", "2028"}
	for _, tc := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", password, "stdin is empty, and it should hold the password"},
		{"\n", password, "line 1 of stdin, the password, is empty"},
		{"hunter2\nsecond\n", password, "stdin holds 2 line(s), and it should hold 1, one a line: the password"},
		{"hunter2\n", authenticator, "stdin holds 1 line(s), and it should hold 2, one a line: the password, then the TOTP secret"},
		{"hunter2\nnot-base32!\n", authenticator, "the TOTP secret is not a base32 key"},
		{"4242\n123\n", card, "the card number is not a card number: it should be 12 to 19 digits"},
		{"4242424242424242\n12a\n", card, "the CVV is not a CVV"},
		{"4242424242424242\n", card, "the card number, then the CVV"},
		{"\n", []string{"Key", "--type", "secret"}, "the secret value read from stdin is empty"},
	} {
		fs := newFake(t)
		_, stderr, err := create(t, fs, tc.stdin, tc.args...)
		if !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("create %q with stdin %q: %v, want the usage error %q", tc.args, tc.stdin, err, tc.want)
		}
		for _, line := range strings.Split(tc.stdin, "\n") {
			if len(line) > 2 && err != nil && strings.Contains(err.Error()+stderr, line) {
				t.Errorf("the error repeats what stdin held (%q): %v", line, err)
			}
		}
		if reqs := fs.requests(); len(reqs) != 0 {
			t.Errorf("stdin %q: %d requests sent, want none", tc.stdin, len(reqs))
		}
	}
}

// TestCreatePromptsOnTerminal: on a terminal, each secret is asked for
// through ReadHidden (no echo), never read as a plain line.
func TestCreatePromptsOnTerminal(t *testing.T) {
	fs := newFake(t)
	fs.reply("POST /v1/credentials", http.StatusCreated, passwordReply)
	f, streams := cmdtest.NewFactory(t, nil)
	f.IO.SetTTY(true, false, true)
	streams.In.WriteString("this must not be read\n")
	var prompts []string
	answers := []string{"hunter2", "JBSWY3DPEHPK3PXP"}
	err := cmdtest.Exec(NewCmdCreate(f, func(o *CreateOptions) error {
		o.Client = fs.client
		o.ReadHidden = func(_ context.Context, prompt string) (string, error) {
			prompts = append(prompts, prompt)
			a := answers[0]
			answers = answers[1:]
			return a, nil
		}
		return runCreate(t.Context(), o)
	}), "Bank", "--type", "password", "--username", "ada", "--totp-type", "authenticator", "-o", "table")
	if err != nil {
		t.Fatal(err)
	}
	if len(prompts) != 2 || !strings.HasPrefix(prompts[0], "Password for ada") || !strings.HasPrefix(prompts[1], "TOTP secret") {
		t.Errorf("prompts %q", prompts)
	}
	assertJSON(t, "request", fs.last("POST", "/v1/credentials").Body,
		`{"name":"Bank","credential_type":"password","credential":{"username":"ada","password":"hunter2","totp":"JBSWY3DPEHPK3PXP","totp_type":"authenticator"}}`)
	if streams.In.String() != "this must not be read\n" {
		t.Errorf("stdin was read as plain text: %q left", streams.In.String())
	}

	// An empty answer stores nothing.
	f.IO.SetTTY(true, false, true)
	err = cmdtest.Exec(NewCmdCreate(f, func(o *CreateOptions) error {
		o.Client = cmdtest.NoClient(t)
		o.ReadHidden = func(context.Context, string) (string, error) { return "", nil }
		return runCreate(t.Context(), o)
	}), "Key", "--type", "secret")
	if !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "the secret value is empty: nothing was stored") {
		t.Errorf("an empty answer: %v", err)
	}
}

func writeFile(t *testing.T, name, text string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCreateFromFile: --from-file reads every field from YAML or JSON,
// keeping values as written, and names the file and line of a mistake.
func TestCreateFromFile(t *testing.T) {
	fs := newFake(t)
	fs.reply("POST /v1/credentials", http.StatusCreated, cardReply)
	card := writeFile(t, "card.yaml", `# the company card
card_number: 4242 4242 4242 4242
card_cvv: 012          # not the number 10
card_exp_month: 01
card_exp_year: 2028
card_brand: visa
card_holder_name: Ada Lovelace
billing_address:
  line1: 1 Main St
  postal_code: 01234
  country_code: GB
billing_phone: null
`, 0o600)
	stdout, stderr, err := create(t, fs, "", "Company card", "--type", "credit_card", "--from-file", card, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "request", fs.last("POST", "/v1/credentials").Body, `{"name":"Company card","credential_type":"credit_card","credential":{
		"card_number":"4242424242424242","card_cvv":"012","card_exp_month":"01","card_exp_year":"2028","card_brand":"visa",
		"card_holder_name":"Ada Lovelace","billing_address":{"line1":"1 Main St","postal_code":"01234","country_code":"GB"}}}`)
	assertJSON(t, "stdout", stdout, cardReply)
	if stderr != "" {
		t.Errorf("stderr %q", stderr)
	}

	// JSON, and from stdin.
	fs = newFake(t)
	fs.reply("POST /v1/credentials", http.StatusCreated, passwordReply)
	if _, _, err := create(t, fs, `{"username": "ada", "password": "hunter2", "totp": "JBSWY3DPEHPK3PXP"}`,
		"Bank", "--type", "password", "--from-file", "-"); err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "request", fs.last("POST", "/v1/credentials").Body,
		`{"name":"Bank","credential_type":"password","credential":{"username":"ada","password":"hunter2","totp":"JBSWY3DPEHPK3PXP","totp_type":"authenticator"}}`)

	// A file others may read works, with a warning.
	if runtime.GOOS != "windows" {
		fs = newFake(t)
		fs.reply("POST /v1/credentials", http.StatusCreated, secretReply)
		open := writeFile(t, "key.yaml", "secret_value: sk_live_1\n", 0o644)
		_, stderr, err := create(t, fs, "", "Key", "--type", "secret", "--from-file", open)
		if err != nil || !strings.Contains(stderr, "warning: "+open+" holds secrets and other users may read it (mode 0644): chmod 600") {
			t.Errorf("a readable file: %v, stderr %q", err, stderr)
		}
	}

	for _, tc := range []struct {
		name, text, typ, want string
	}{
		{"typo.yaml", "username: ada\npasword: x\n", "password", `typo.yaml:2: unknown field "pasword" of a password credential; its fields are password, totp, totp_identifier, totp_type, username`},
		{"request.yaml", "name: Shop\nusername: ada\n", "password", `request.yaml:1: unknown field "name" of a password credential (the file holds the credential's fields only`},
		{"billing.yaml", "card_number: 4242424242424242\nbilling_address:\n  street: x\n", "credit_card", `billing.yaml:3: unknown field "street" of a billing address`},
		{"list.yaml", "- username: ada\n", "password", "list.yaml:1: the file should be a mapping of the password credential's fields"},
		{"empty.yaml", "# nothing\n", "secret", "empty.yaml is empty: it should hold the secret credential's fields (secret_label, secret_value)"},
		{"nested.yaml", "secret_value:\n  a: b\n", "secret", "nested.yaml:2: secret_value should be text, not a mapping"},
		{"twice.yaml", "secret_value: a\nsecret_value: b\n", "secret", "twice.yaml:2: secret_value is given twice"},
		{"broken.json", `{"secret_value": `, "secret", "broken.json is not YAML or JSON"},
		{"nopass.yaml", "username: ada\n", "password", "a password credential needs password (in "},
		{"month.yaml", "card_number: 4242424242424242\ncard_cvv: 123\ncard_exp_month: 13\ncard_exp_year: 2028\ncard_brand: visa\ncard_holder_name: A\n",
			"credit_card", `card_exp_month (in `},
		{"factor.yaml", "username: ada\npassword: x\ntotp_type: authenticator\n", "password", "with an authenticator as second factor, a password credential needs totp (in "},
	} {
		p := writeFile(t, tc.name, tc.text, 0o600)
		fs := newFake(t)
		_, _, err := create(t, fs, "", "X", "--type", tc.typ, "--from-file", p)
		msg := ""
		if err != nil {
			msg = strings.ReplaceAll(err.Error(), filepath.Dir(p)+string(filepath.Separator), "")
		}
		if !cmdtest.IsUsage(err) || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %v, want the usage error %q", tc.name, err, tc.want)
		}
		if len(fs.requests()) != 0 {
			t.Errorf("%s: a request was sent", tc.name)
		}
	}
	if _, _, err := create(t, newFake(t), "", "X", "--type", "secret", "--from-file", filepath.Join(t.TempDir(), "missing.yaml")); cmdtest.ExitCode(err) != cmdutil.ExitUsage ||
		!strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("a missing file: %v", err)
	}
}

// TestUpdate keeps what the service shows of the credential when it is
// not given again, and reads the new secrets.
func TestUpdate(t *testing.T) {
	fs := newFake(t)
	fs.reply("GET /v1/credentials/{id}", http.StatusOK, passwordReply)
	fs.reply("POST /v1/credentials/{id}/update", http.StatusOK, passwordReply)
	update := func(stdin string, args ...string) (string, error) {
		f, streams := cmdtest.NewFactory(t, nil)
		streams.In.WriteString(stdin)
		err := cmdtest.Exec(NewCmdUpdate(f, func(o *UpdateOptions) error {
			o.Client = fs.client
			return runUpdate(t.Context(), o)
		}), args...)
		return streams.Out.String(), err
	}
	out, err := update("n3w-password\n", "credential/cred_1")
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "request", fs.last("POST", "/v1/credentials/cred_1/update").Body, `{"name":"Shop login","credential_type":"password",
		"credential":{"username":"ada@example.com","password":"n3w-password","totp_type":"email","totp_identifier":"ada@example.com"}}`)
	if out != "credential/cred_1\n" {
		t.Errorf("stdout %q", out)
	}
	if _, err := update("n3w\n", "cred_1", "--name", "Old shop", "--username", "bob", "--totp-type", "none"); err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "request", fs.last("POST", "/v1/credentials/cred_1/update").Body,
		`{"name":"Old shop","credential_type":"password","credential":{"username":"bob","password":"n3w"}}`)

	// The kind is the credential's: a card's flags do not fit a login.
	n := len(fs.requests())
	if _, err := update("x\n", "cred_1", "--card-brand", "visa"); !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "--card-brand is for credit_card credentials, and this one is a password credential") {
		t.Errorf("a card's flag: %v", err)
	}
	if got := fs.requests()[n:]; len(got) != 1 || got[0].Method != "GET" {
		t.Errorf("after a refused flag: %+v, want only the GET", got)
	}

	// A card's holder and expiry are not shown: they must come again.
	fs.reply("GET /v1/credentials/cred_2", http.StatusOK, cardReply)
	if _, err := update("4242424242424242\n123\n", "cred_2"); !cmdtest.IsUsage(err) ||
		!strings.Contains(err.Error(), "credential cred_2 is a credit_card credential: its data is replaced as a whole, and it needs --card-holder-name and --card-exp-month and --card-exp-year again") {
		t.Errorf("a card without its fields: %v", err)
	}
	if _, err := update("", "run/wr_1"); !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), `"run/wr_1" names a run, not a credential`) {
		t.Errorf("a run's id: %v", err)
	}
}

func TestListAndGet(t *testing.T) {
	fs := newFake(t)
	fs.reply("GET /v1/credentials", http.StatusOK, "["+passwordReply+","+cardReply+","+secretReply+"]")
	fs.reply("GET /v1/credentials/{id}", http.StatusOK, cardReply)
	list := func(args ...string) string {
		t.Helper()
		f, streams := cmdtest.NewFactory(t, nil)
		err := cmdtest.Exec(NewCmdList(f, func(o *ListOptions) error { o.Client = fs.client; return runList(t.Context(), o) }), args...)
		if err != nil {
			t.Fatalf("list %q: %v", args, err)
		}
		return streams.Out.String()
	}
	want := "cred_1\tShop login\tpassword\tada@example.com (2FA: email to ada@example.com)\n" +
		"cred_2\tCompany card\tcredit_card\t•••• 4242 visa\n" +
		"cred_3\tBilling API\tsecret\tAPI key\n"
	if got := list(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
	if q := fs.last("GET", "/v1/credentials").Query; !reflect.DeepEqual(q, map[string][]string{"page": {"1"}, "page_size": {"100"}}) {
		t.Errorf("query %v", q)
	}
	if got := list("--type", "password", "--search", "shop", "--limit", "2", "-o", "name"); got != "credential/cred_1\ncredential/cred_2\n" {
		t.Errorf("-o name: %q", got)
	}
	if q := fs.last("GET", "/v1/credentials").Query; !reflect.DeepEqual(q, map[string][]string{"page": {"1"}, "page_size": {"2"}, "credential_type": {"password"}, "search": {"shop"}}) {
		t.Errorf("query %v", q)
	}
	assertJSON(t, "-o json", list("-o", "json"), "["+passwordReply+","+cardReply+","+secretReply+"]")

	// A terminal gets a header.
	f, streams := cmdtest.NewFactory(t, nil)
	f.IO.SetTTY(false, true, false)
	if err := cmdtest.Exec(NewCmdGet(f, func(o *GetOptions) error { o.Client = fs.client; return runGet(t.Context(), o) }), "credential/cred_2"); err != nil {
		t.Fatal(err)
	}
	if got := streams.Out.String(); !strings.HasPrefix(got, "ID ") || !strings.Contains(got, "DETAILS") || !strings.Contains(got, "•••• 4242 visa") {
		t.Errorf("get on a terminal:\n%s", got)
	}
	f, streams = cmdtest.NewFactory(t, nil)
	if err := cmdtest.Exec(NewCmdGet(f, func(o *GetOptions) error { o.Client = fs.client; return runGet(t.Context(), o) }), "cred_2", "-o", "yaml"); err != nil {
		t.Fatal(err)
	}
	if got := streams.Out.String(); !strings.HasPrefix(got, "credential_id: cred_2\ncredential:\n  last_four: \"4242\"\n  brand: visa\n") {
		t.Errorf("-o yaml:\n%s", got)
	}

	for _, tc := range []struct {
		cmd  func() *cobra.Command
		args []string
		want string
	}{
		{func() *cobra.Command { return NewCmdList(f, nil) }, []string{"--type", "card"}, `--type "card" is not a kind of credential`},
		{func() *cobra.Command { return NewCmdList(f, nil) }, []string{"--limit", "-1"}, "--limit must be 0 (all) or more"},
		{func() *cobra.Command { return NewCmdList(f, nil) }, []string{"--search", strings.Repeat("x", 201)}, "--search is 201 characters long; the service takes at most 200"},
		{func() *cobra.Command { return NewCmdList(f, nil) }, []string{"extra"}, "takes no arguments"},
		{func() *cobra.Command { return NewCmdGet(f, nil) }, nil, "takes one or more credential ids"},
		{func() *cobra.Command { return NewCmdGet(f, nil) }, []string{"folder/fld_1"}, `"folder/fld_1" names a folder, not a credential`},
		{func() *cobra.Command { return NewCmdGet(f, nil) }, []string{"credential/"}, `"credential/" names no credential`},
	} {
		if err := cmdtest.Exec(tc.cmd(), tc.args...); !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want the usage error %q", tc.args, err, tc.want)
		}
	}
}

func TestDelete(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var got *DeleteOptions
	run := func(args ...string) error {
		got = nil
		return cmdtest.Exec(NewCmdDelete(f, func(o *DeleteOptions) error { got = o; return nil }), args...)
	}
	if err := run("credential/cred_1", "--yes"); err != nil || got.CredentialID != "cred_1" || !got.Yes {
		t.Errorf("delete --yes: %+v %v", got, err)
	}
	if err := run("cred_1"); got != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "add --yes when no terminal can confirm") {
		t.Errorf("without --yes and a terminal: %v", err)
	}
	if err := run("agent/contact-form", "-y"); got != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "names an agent, not a credential") {
		t.Errorf("an agent: %v", err)
	}
	f.IO.SetTTY(true, false, true)
	if err := run("cred_1"); err != nil || got.Yes {
		t.Errorf("on a terminal: %+v %v", got, err)
	}

	// On a terminal it says what is about to go, and a "no" keeps it.
	fs := newFake(t)
	fs.reply("GET /v1/credentials/{id}", http.StatusOK, passwordReply)
	fs.reply("POST /v1/credentials/{id}/delete", http.StatusNoContent, "")
	for _, answer := range []string{"n\n", "y\n"} {
		f, streams := cmdtest.NewFactory(t, nil)
		f.IO.SetTTY(true, false, true)
		streams.In.WriteString(answer)
		err := cmdtest.Exec(NewCmdDelete(f, func(o *DeleteOptions) error { o.Client = fs.client; return runDelete(t.Context(), o) }), "cred_1")
		deleted := len(fs.requests()) > 0 && fs.requests()[len(fs.requests())-1].Method == "POST"
		if answer == "n\n" && (cmdtest.ExitCode(err) != cmdutil.ExitError || deleted) {
			t.Errorf("answered no: %v, deleted %v", err, deleted)
		}
		if answer == "y\n" && (err != nil || !deleted || !strings.Contains(streams.ErrOut.String(), `Credential cred_1 ("Shop login", password, ada@example.com (2FA: email to ada@example.com)) deleted.`)) {
			t.Errorf("answered yes: %v, deleted %v, stderr %q", err, deleted, streams.ErrOut.String())
		}
		if !strings.Contains(streams.ErrOut.String(), `Delete credential cred_1 ("Shop login", password`) || streams.Out.Len() != 0 {
			t.Errorf("the question %q, stdout %q", streams.ErrOut.String(), streams.Out.String())
		}
	}

	// With --yes, no question and no GET.
	fs = newFake(t)
	fs.reply("POST /v1/credentials/{id}/delete", http.StatusNoContent, "")
	f, streams := cmdtest.NewFactory(t, nil)
	if err := cmdtest.Exec(NewCmdDelete(f, func(o *DeleteOptions) error { o.Client = fs.client; return runDelete(t.Context(), o) }), "cred_9", "--yes"); err != nil {
		t.Fatal(err)
	}
	if reqs := fs.requests(); len(reqs) != 1 || reqs[0].Path != "/v1/credentials/cred_9/delete" || streams.ErrOut.String() != "Credential cred_9 deleted.\n" {
		t.Errorf("requests %+v, stderr %q", reqs, streams.ErrOut.String())
	}
}

func TestTOTPSend(t *testing.T) {
	const reply = `{"totp_identifier":"ada@example.com","task_id":null,"workflow_id":null,"workflow_run_id":"wr_1","source":"sms","content":"Your code is 123456",
		"expired_at":"2026-11-24T12:05:00","type":"totp","totp_code_id":"totp_1","code":"123456","organization_id":"o_1",
		"created_at":"2026-11-24T12:00:00","modified_at":"2026-11-24T12:00:00","otp_type":"totp"}`
	fs := newFake(t)
	fs.reply("POST /v1/credentials/totp", http.StatusOK, reply)
	send := func(stdin string, args ...string) (string, error) {
		f, streams := cmdtest.NewFactory(t, nil)
		streams.In.WriteString(stdin)
		err := cmdtest.Exec(NewCmdTOTPSend(f, func(o *TOTPSendOptions) error { o.Client = fs.client; return runTOTPSend(t.Context(), o) }), args...)
		return streams.Out.String(), err
	}
	out, err := send("", "ada@example.com", "Your code is 123456", "--run", "run/wr_1", "--source", "sms", "--expires-in", "5m")
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "request", fs.last("POST", "/v1/credentials/totp").Body, `{"totp_identifier":"ada@example.com","content":"Your code is 123456",
		"workflow_run_id":"wr_1","source":"sms","expired_at":"2026-11-24T12:05:00"}`)
	if out != "totp_1\tada@example.com\t123456\t2026-11-24T12:05:00Z\n" {
		t.Errorf("stdout %q", out)
	}
	if _, err := send("Subject: sign in\n\nYour code is 654321.\n", "+14155550123", "-", "--task", "tsk_1", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "request", fs.last("POST", "/v1/credentials/totp").Body,
		`{"totp_identifier":"+14155550123","content":"Subject: sign in\n\nYour code is 654321.","task_id":"tsk_1"}`)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ada@example.com"}, "takes IDENTIFIER"},
		{[]string{" ", "123456"}, "IDENTIFIER is empty"},
		{[]string{"ada@example.com", ""}, "CONTENT is empty"},
		{[]string{"ada@example.com", "1", "--expires-in", "-5m"}, "--expires-in must be a positive duration"},
		{[]string{"ada@example.com", "1", "--run", "tsk_1"}, "--run tsk_1 is a task run: give it as --task tsk_1"},
		{[]string{"ada@example.com", "1", "--run", "agent/x"}, `"agent/x" names an agent, not a run`},
	} {
		f, _ := cmdtest.NewFactory(t, nil)
		err := cmdtest.Exec(NewCmdTOTPSend(f, func(*TOTPSendOptions) error { t.Error("ran"); return nil }), tc.args...)
		if !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("totp send %q: %v, want the usage error %q", tc.args, err, tc.want)
		}
	}
	if _, err := send("  \n", "ada@example.com", "-"); !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "stdin is empty") {
		t.Errorf("empty stdin: %v", err)
	}
}

func TestNormalizeTOTP(t *testing.T) {
	for in, want := range map[string]string{
		"JBSWY3DPEHPK3PXP":       "JBSWY3DPEHPK3PXP",
		" jbsw y3dp ehpk 3pxp ":  "JBSWY3DPEHPK3PXP",
		"JBSW-Y3DP-EHPK-3PXP===": "JBSWY3DPEHPK3PXP",
		"otpauth://totp/Shop:ada?secret=JBSWY3DPEHPK3PXP&digits=8": "otpauth://totp/Shop:ada?secret=JBSWY3DPEHPK3PXP&digits=8",
		"otpauth://totp/Shop:ada?secret=JBSWY3DPEHPK3PX1":          "error",
		"JBSWY3DPEHPK3PX1":    "error",
		"otpauth://totp/Shop": "error",
		"   ":                 "error",
	} {
		got, err := normalizeTOTP(in)
		if want == "error" {
			if err == nil {
				t.Errorf("%q: %q, want an error", in, got)
			} else if strings.Contains(err.Error(), strings.TrimSpace(in)) && strings.TrimSpace(in) != "" {
				t.Errorf("%q: the error repeats the secret: %v", in, err)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
}
