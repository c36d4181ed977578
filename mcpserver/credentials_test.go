package mcpserver_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/mcpserver"
)

// The credential tools join the list TestListTools expects.
// The secrets the tests store, which no answer of a tool may hold.
const (
	testPassword   = "correct-horse-battery-staple"
	testTOTPSecret = "JBSWY3DPEHPK3PXP"
	testCardNumber = "4242424242424242"
	testCardCVV    = "987"
	testSecret     = "sk_live_mcp_test_value"
)

// TestCredentials: the tools list, show and delete credentials stored
// through the SDK, and never show a secret.
func TestCredentials(t *testing.T) {
	faces(t, false, func(t *testing.T, e *env, s *mcp.ClientSession) {
		ctx := t.Context()
		login, err := e.c.Credentials.Create(ctx, &client.CredentialRequest{Name: "Shop login", Credential: &client.PasswordCredential{
			Username: "ada@example.com", Password: testPassword, TOTPType: client.TOTPTypeEmail, TOTPIdentifier: "ada@example.com"}})
		if err != nil {
			t.Fatalf("create a password credential through the SDK: %v", err)
		}
		bank, err := e.c.Credentials.Create(ctx, &client.CredentialRequest{Name: "Bank", Credential: &client.PasswordCredential{
			Username: "ada", Password: testPassword, TOTP: testTOTPSecret, TOTPType: client.TOTPTypeAuthenticator}})
		if err != nil {
			t.Fatal(err)
		}
		card, err := e.c.Credentials.Create(ctx, &client.CredentialRequest{Name: "Company card", Credential: &client.CreditCardCredential{
			CardNumber: testCardNumber, CardCVV: testCardCVV, CardExpMonth: "12", CardExpYear: "2030", CardBrand: "visa", CardHolderName: "Ada Lovelace"}})
		if err != nil {
			t.Fatal(err)
		}
		secret, err := e.c.Credentials.Create(ctx, &client.CredentialRequest{Name: "Billing API", Credential: &client.SecretCredential{
			SecretValue: testSecret, SecretLabel: "API key"}})
		if err != nil {
			t.Fatal(err)
		}

		list, text := callText[mcpserver.CredentialList](t, s, "skyvern_credential_list", nil)
		noSecrets(t, "credential_list", text)
		if len(list.Credentials) != 4 || list.Page != 1 || list.PageSize != 10 || list.HasMore {
			t.Fatalf("credential_list = %+v", list)
		}
		byID := map[string]mcpserver.CredentialInfo{}
		for _, c := range list.Credentials {
			byID[c.CredentialID] = c
		}
		want := map[string]mcpserver.CredentialInfo{
			login.CredentialID: {CredentialID: login.CredentialID, Name: "Shop login", CredentialType: "password", VaultType: "skyvern",
				Username: "ada@example.com", TOTPType: "email", TOTPIdentifier: "ada@example.com"},
			bank.CredentialID: {CredentialID: bank.CredentialID, Name: "Bank", CredentialType: "password", VaultType: "skyvern",
				Username: "ada", TOTPType: "authenticator"},
			card.CredentialID: {CredentialID: card.CredentialID, Name: "Company card", CredentialType: "credit_card", VaultType: "skyvern",
				LastFour: "4242", Brand: "visa"},
			secret.CredentialID: {CredentialID: secret.CredentialID, Name: "Billing API", CredentialType: "secret", VaultType: "skyvern",
				SecretLabel: "API key"},
		}
		for id, w := range want {
			if got := byID[id]; got != w {
				t.Errorf("credential_list shows %s as %+v\nwant %+v", id, got, w)
			}
		}

		// Paging: two a page.
		page2, _ := callText[mcpserver.CredentialList](t, s, "skyvern_credential_list", map[string]any{"page": 2, "page_size": 2})
		if len(page2.Credentials) != 2 || page2.Page != 2 || page2.PageSize != 2 || !page2.HasMore {
			t.Errorf("credential_list page 2 = %+v", page2)
		}
		page1, _ := callText[mcpserver.CredentialList](t, s, "skyvern_credential_list", map[string]any{"page": 1, "page_size": 2})
		for _, c := range page1.Credentials {
			for _, d := range page2.Credentials {
				if c.CredentialID == d.CredentialID {
					t.Errorf("%s is on pages 1 and 2", c.CredentialID)
				}
			}
		}

		got, text := callText[mcpserver.CredentialInfo](t, s, "skyvern_credential_get", map[string]any{"credential_id": card.CredentialID})
		noSecrets(t, "credential_get", text)
		if got != want[card.CredentialID] {
			t.Errorf("credential_get = %+v", got)
		}

		del := call[mcpserver.CredentialDeleteResult](t, s, "skyvern_credential_delete", map[string]any{"credential_id": secret.CredentialID})
		if !del.Deleted || del.CredentialID != secret.CredentialID {
			t.Errorf("credential_delete = %+v", del)
		}
		if _, err := e.c.Credentials.Get(ctx, secret.CredentialID); !errors.Is(err, client.ErrNotFound) {
			t.Errorf("the deleted credential reads as %v, want 404", err)
		}
		if l := call[mcpserver.CredentialList](t, s, "skyvern_credential_list", nil); len(l.Credentials) != 3 {
			t.Errorf("after the delete, credential_list = %+v", l)
		}

		for _, tc := range []struct {
			tool string
			args map[string]any
			want string
		}{
			{"skyvern_credential_get", map[string]any{"credential_id": "cred_404"}, "404"},
			{"skyvern_credential_delete", map[string]any{"credential_id": secret.CredentialID}, "404"},
			{"skyvern_credential_get", map[string]any{}, "credential_id"},
			{"skyvern_credential_get", map[string]any{"credential_id": ""}, "credential_id"},
			{"skyvern_credential_list", map[string]any{"page_size": 1000}, "page_size"},
			{"skyvern_credential_list", map[string]any{"page": 0}, "page"},
		} {
			if msg := callError(t, s, tc.tool, tc.args); !strings.Contains(msg, tc.want) {
				t.Errorf("%s(%v): error %q does not mention %q", tc.tool, tc.args, msg, tc.want)
			}
		}
	})
}

// TestNoToolTakesASecret: no tool creates or changes a credential, and no
// tool's input has a field a secret would be given in.
func TestNoToolTakesASecret(t *testing.T) {
	e := startEnv(t, false)
	s := e.stdioSession(t)
	res, err := s.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	secretFields := []string{"password", "totp", "card_number", "card_cvv", "secret_value", "credential"}
	for _, tool := range res.Tools {
		if strings.Contains(tool.Name, "credential") && !slices.Contains([]string{"skyvern_credential_list", "skyvern_credential_get", "skyvern_credential_delete"}, tool.Name) {
			t.Errorf("tool %s: the credential tools only read and delete", tool.Name)
		}
		props, _ := schemaMap(t, tool.InputSchema)["properties"].(map[string]any)
		for _, f := range secretFields {
			if _, ok := props[f]; ok {
				t.Errorf("tool %s takes %q: a secret must not pass through an assistant", tool.Name, f)
			}
		}
		if tool.Name == "skyvern_credential_list" && !strings.Contains(tool.Description, "abctl credentials create") {
			t.Errorf("skyvern_credential_list does not tell how the user stores a credential: %q", tool.Description)
		}
	}
}

// callText is call, also returning the text content of the answer.
func callText[Out any](t *testing.T, s *mcp.ClientSession, name string, args map[string]any) (Out, string) {
	t.Helper()
	out := call[Out](t, s, name, args)
	res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s again: %v %v", name, err, res)
	}
	structured, _ := json.Marshal(res.StructuredContent)
	return out, text(res) + string(structured)
}

func noSecrets(t *testing.T, what, answer string) {
	t.Helper()
	// The CVV is short enough to be part of an id: it is looked for as a
	// JSON string.
	for _, secret := range []string{testPassword, testTOTPSecret, testCardNumber, `"` + testCardCVV + `"`, testSecret} {
		if strings.Contains(answer, secret) {
			t.Errorf("%s shows a secret (%s...): %s", what, secret[:4], answer)
		}
	}
}
