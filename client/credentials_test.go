package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
)

// The three shapes the service gives a credential's data, by its type.
const (
	passwordCredentialReply = `{"credential_id":"cred_1","credential":{"username":"ada@example.com","totp_type":"email","totp_identifier":"ada@example.com"},
		"credential_type":"password","name":"Shop login","vault_type":"skyvern","browser_profile_id":null,"tested_url":null,"user_context":null,
		"save_browser_session_intent":null,"folder_id":null,"proxy_location":null,"proxy_session_id":null,"new_field":1}`
	cardCredentialReply   = `{"credential_id":"cred_2","credential":{"last_four":"4242","brand":"visa"},"credential_type":"credit_card","name":"Company card","vault_type":"skyvern"}`
	secretCredentialReply = `{"credential_id":"cred_3","credential":{"secret_label":"API key"},"credential_type":"secret","name":"Billing API","vault_type":null}`
)

const totpCodeReply = `{"totp_identifier":"ada@example.com","task_id":null,"workflow_id":null,"workflow_run_id":"wr_1","source":"email",
	"content":"Your code is 123456","expired_at":"2026-01-31T15:30:42","type":"totp","totp_code_id":"totp_1","code":"123456",
	"organization_id":"o_1","created_at":"2026-01-31T15:20:42","modified_at":"2026-01-31T15:20:42","otp_type":"totp"}`

// TestCredentialOperations: each method's route, query and body, and what
// it decodes of the reply.
func TestCredentialOperations(t *testing.T) {
	expires := client.NewTime(time.Date(2026, 1, 31, 15, 30, 42, 0, time.UTC))
	for _, op := range []operation{
		{
			name: "create password", route: "POST /v1/credentials", reply: passwordCredentialReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Credentials.Create(ctx, &client.CredentialRequest{
					Name: "Shop login",
					Credential: &client.PasswordCredential{Username: "ada@example.com", Password: "hunter2",
						TOTPType: client.TOTPTypeEmail, TOTPIdentifier: "ada@example.com"},
				})
			},
			wantPath: "/v1/credentials",
			// credential_type comes from the data; an empty totp is left out.
			wantBody: `{"name":"Shop login","credential_type":"password","credential":{"username":"ada@example.com","password":"hunter2",
				"totp_type":"email","totp_identifier":"ada@example.com"}}`,
			check: func(t *testing.T, got any) {
				c := got.(*client.Credential)
				if c.CredentialID != "cred_1" || c.CredentialType != client.CredentialTypePassword || c.Name != "Shop login" ||
					c.Credential.Username != "ada@example.com" || c.Credential.TOTPType != client.TOTPTypeEmail ||
					c.Credential.TOTPIdentifier == nil || *c.Credential.TOTPIdentifier != "ada@example.com" ||
					c.VaultType == nil || *c.VaultType != client.CredentialVaultSkyvern || c.BrowserProfileID != nil {
					t.Errorf("credential: %+v", c)
				}
			},
		},
		{
			name: "create credit card", route: "POST /v1/credentials", reply: cardCredentialReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Credentials.Create(ctx, &client.CredentialRequest{
					Name: "Company card", VaultType: client.CredentialVaultSkyvern,
					Credential: &client.CreditCardCredential{CardNumber: "4242424242424242", CardCVV: "424", CardExpMonth: "12",
						CardExpYear: "2028", CardBrand: "visa", CardHolderName: "Ada Lovelace",
						BillingAddress: &client.CreditCardBillingAddress{Line1: "1 Main St", CountryCode: "GB"}},
				})
			},
			wantPath: "/v1/credentials",
			wantBody: `{"name":"Company card","credential_type":"credit_card","vault_type":"skyvern","credential":{"card_number":"4242424242424242",
				"card_cvv":"424","card_exp_month":"12","card_exp_year":"2028","card_brand":"visa","card_holder_name":"Ada Lovelace",
				"billing_address":{"line1":"1 Main St","country_code":"GB"}}}`,
			check: func(t *testing.T, got any) {
				c := got.(*client.Credential)
				if c.CredentialType != client.CredentialTypeCreditCard || c.Credential.LastFour != "4242" || c.Credential.Brand != "visa" || c.Credential.Username != "" {
					t.Errorf("credential: %+v", c)
				}
			},
		},
		{
			// An explicit credential_type is sent as it is.
			name: "create secret", route: "POST /v1/credentials", reply: secretCredentialReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Credentials.Create(ctx, &client.CredentialRequest{
					Name: "Billing API", CredentialType: client.CredentialTypeSecret,
					Credential: &client.SecretCredential{SecretValue: "sk_live_1", SecretLabel: "API key"},
				})
			},
			wantPath: "/v1/credentials",
			wantBody: `{"name":"Billing API","credential_type":"secret","credential":{"secret_value":"sk_live_1","secret_label":"API key"}}`,
			check: func(t *testing.T, got any) {
				c := got.(*client.Credential)
				if c.CredentialType != client.CredentialTypeSecret || c.Credential.SecretLabel == nil || *c.Credential.SecretLabel != "API key" || c.VaultType != nil {
					t.Errorf("credential: %+v", c)
				}
			},
		},
		{
			name: "list credentials", route: "GET /v1/credentials",
			reply: "[" + passwordCredentialReply + "," + cardCredentialReply + "," + secretCredentialReply + "]",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Credentials.List(ctx, &client.ListCredentialsOptions{Page: 2, PageSize: 25,
					CredentialType: client.CredentialTypePassword, VaultType: client.CredentialVaultSkyvern, Search: "shop"})
			},
			wantPath: "/v1/credentials",
			wantQuery: map[string][]string{"page": {"2"}, "page_size": {"25"}, "credential_type": {"password"},
				"vault_type": {"skyvern"}, "search": {"shop"}},
			check: func(t *testing.T, got any) {
				list := got.([]*client.Credential)
				if len(list) != 3 || list[0].CredentialID != "cred_1" || list[1].Credential.LastFour != "4242" || *list[2].Credential.SecretLabel != "API key" {
					t.Errorf("credentials: %+v", list)
				}
			},
		},
		{
			name: "list credentials without options", route: "GET /v1/credentials", reply: `[]`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Credentials.List(ctx, nil)
			},
			wantPath: "/v1/credentials",
			check: func(t *testing.T, got any) {
				if list := got.([]*client.Credential); list == nil || len(list) != 0 {
					t.Errorf("an empty list: %#v, want empty and not nil", list)
				}
			},
		},
		{
			name: "get credential", route: "GET /v1/credentials/{id}", reply: cardCredentialReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Credentials.Get(ctx, "cred_2")
			},
			wantPath: "/v1/credentials/cred_2",
			check: func(t *testing.T, got any) {
				if c := got.(*client.Credential); c.CredentialID != "cred_2" || c.Credential.Brand != "visa" {
					t.Errorf("credential: %+v", c)
				}
			},
		},
		{
			// The id is one path segment, however odd.
			name: "get credential with an odd id", route: "GET /v1/credentials/{id}", reply: cardCredentialReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Credentials.Get(ctx, "a/b?c")
			},
			wantPath: "/v1/credentials/a%2Fb%3Fc",
		},
		{
			name: "update credential", route: "POST /v1/credentials/{id}/update", reply: passwordCredentialReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Credentials.Update(ctx, "cred_1", &client.CredentialRequest{
					Name:       "Shop login",
					Credential: &client.PasswordCredential{Username: "ada@example.com", Password: "n3w", TOTP: "JBSWY3DPEHPK3PXP", TOTPType: client.TOTPTypeAuthenticator},
				})
			},
			wantPath: "/v1/credentials/cred_1/update",
			wantBody: `{"name":"Shop login","credential_type":"password","credential":{"username":"ada@example.com","password":"n3w",
				"totp":"JBSWY3DPEHPK3PXP","totp_type":"authenticator"}}`,
			check: func(t *testing.T, got any) {
				if c := got.(*client.Credential); c.CredentialID != "cred_1" {
					t.Errorf("credential: %+v", c)
				}
			},
		},
		{
			name: "delete credential", route: "POST /v1/credentials/{id}/delete", reply: "",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return nil, c.Credentials.Delete(ctx, "cred_3")
			},
			wantPath: "/v1/credentials/cred_3/delete",
		},
		{
			name: "send totp code", route: "POST /v1/credentials/totp", reply: totpCodeReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Credentials.SendTOTPCode(ctx, &client.TOTPCodeRequest{TOTPIdentifier: "ada@example.com",
					Content: "Your code is 123456", WorkflowRunID: "wr_1", Source: "email", ExpiredAt: &expires})
			},
			wantPath: "/v1/credentials/totp",
			wantBody: `{"totp_identifier":"ada@example.com","content":"Your code is 123456","workflow_run_id":"wr_1","source":"email",
				"expired_at":"2026-01-31T15:30:42"}`,
			check: func(t *testing.T, got any) {
				c := got.(*client.TOTPCode)
				if c.TOTPCodeID != "totp_1" || c.Code != "123456" || c.TOTPIdentifier != "ada@example.com" || c.TaskID != nil ||
					c.WorkflowRunID == nil || *c.WorkflowRunID != "wr_1" || c.Type == nil || *c.Type != client.OTPTypeTOTP ||
					c.ExpiredAt == nil || !c.ExpiredAt.Equal(expires.Time) {
					t.Errorf("code: %+v", c)
				}
			},
		},
	} {
		t.Run(op.name, func(t *testing.T) {
			ts := newTestServer(t)
			status := http.StatusOK
			if op.reply == "" {
				status = http.StatusNoContent // as the service answers a delete
			}
			ts.reply(op.route, status, op.reply)
			got, err := op.call(t.Context(), ts.client)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			req := ts.only()
			if want := strings.Fields(op.route)[0]; req.Method != want {
				t.Errorf("method %s, want %s", req.Method, want)
			}
			if req.Path != op.wantPath {
				t.Errorf("path %s, want %s", req.Path, op.wantPath)
			}
			wantQuery := op.wantQuery
			if wantQuery == nil {
				wantQuery = map[string][]string{}
			}
			if !reflect.DeepEqual(req.Query, wantQuery) {
				t.Errorf("query %v, want %v", req.Query, wantQuery)
			}
			if k := req.Header.Get("X-Api-Key"); k != testAPIKey {
				t.Errorf("x-api-key %q", k)
			}
			if op.wantBody == "" {
				if len(req.Body) != 0 {
					t.Errorf("unexpected body %s", req.Body)
				}
			} else {
				if ct := req.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q, want application/json", ct)
				}
				assertJSONEqual(t, "body", req.Body, op.wantBody)
			}
			if op.check != nil {
				op.check(t, got)
			}
		})
	}
}

// TestCredentialRequestType: credential_type is filled from the data when
// it is empty, kept when it is set, and null without data.
func TestCredentialRequestType(t *testing.T) {
	for _, tc := range []struct {
		req  client.CredentialRequest
		want string
	}{
		{client.CredentialRequest{Name: "p", Credential: &client.PasswordCredential{Username: "u", Password: "p"}},
			`{"name":"p","credential_type":"password","credential":{"username":"u","password":"p"}}`},
		{client.CredentialRequest{Name: "c", Credential: &client.CreditCardCredential{CardNumber: "4111111111111111"}},
			`{"name":"c","credential_type":"credit_card","credential":{"card_number":"4111111111111111","card_cvv":"","card_exp_month":"",
				"card_exp_year":"","card_brand":"","card_holder_name":""}}`},
		{client.CredentialRequest{Name: "s", Credential: &client.SecretCredential{SecretValue: "v"}},
			`{"name":"s","credential_type":"secret","credential":{"secret_value":"v"}}`},
		// A type given by the caller wins, even when it does not match: the
		// service is the one to refuse it.
		{client.CredentialRequest{Name: "x", CredentialType: client.CredentialTypeSecret, Credential: &client.PasswordCredential{Username: "u"}},
			`{"name":"x","credential_type":"secret","credential":{"username":"u","password":""}}`},
		{client.CredentialRequest{Name: "none"}, `{"name":"none","credential_type":"","credential":null}`},
	} {
		b, err := json.Marshal(tc.req)
		if err != nil {
			t.Fatalf("%s: %v", tc.req.Name, err)
		}
		assertJSONEqual(t, tc.req.Name, b, tc.want)
		// A pointer marshals the same way.
		if bp, err := json.Marshal(&tc.req); err != nil || string(bp) != string(b) {
			t.Errorf("%s: through a pointer %s, %v; want %s", tc.req.Name, bp, err, b)
		}
	}
}

// TestCredentialInfoShapes: CredentialInfo writes exactly the service's
// shape for each type, and reads it back.
func TestCredentialInfoShapes(t *testing.T) {
	for _, tc := range []struct {
		name string
		info client.CredentialInfo
		want string
	}{
		{"password", client.CredentialInfo{Username: "ada", TOTPType: client.TOTPTypeAuthenticator},
			`{"username":"ada","totp_type":"authenticator","totp_identifier":null}`},
		{"password without a second factor", client.CredentialInfo{Username: "ada"},
			`{"username":"ada","totp_type":"none","totp_identifier":null}`},
		{"password with an identifier", client.CredentialInfo{Username: "ada", TOTPType: client.TOTPTypeText, TOTPIdentifier: client.Ptr("+14155550123")},
			`{"username":"ada","totp_type":"text","totp_identifier":"+14155550123"}`},
		{"card", client.CredentialInfo{LastFour: "1234", Brand: "mastercard"}, `{"last_four":"1234","brand":"mastercard"}`},
		{"card without a brand", client.CredentialInfo{LastFour: "1234"}, `{"last_four":"1234","brand":""}`},
		{"secret", client.CredentialInfo{SecretLabel: client.Ptr("PIN")}, `{"secret_label":"PIN"}`},
		{"secret without a label", client.CredentialInfo{}, `{"secret_label":null}`},
	} {
		b, err := json.Marshal(tc.info)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if string(b) != tc.want {
			t.Errorf("%s: %s\nwant %s", tc.name, b, tc.want)
		}
		var back client.CredentialInfo
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: read back: %v", tc.name, err)
		}
		if again, _ := json.Marshal(back); string(again) != tc.want {
			t.Errorf("%s: read back and written again: %s, want %s", tc.name, again, tc.want)
		}
	}

	// Inside a Credential, the data keeps its shape too.
	var c client.Credential
	if err := json.Unmarshal([]byte(cardCredentialReply), &c); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if string(m["credential"]) != `{"last_four":"4242","brand":"visa"}` {
		t.Errorf("a card credential's data written as %s", m["credential"])
	}
}

// TestCredentialChecks: requests that cannot be right are refused before
// anything is sent, with a message naming what is missing.
func TestCredentialChecks(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	c := ts.client
	secret := &client.SecretCredential{SecretValue: "v"}
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"create nil", func() error { _, err := c.Credentials.Create(ctx, nil); return err }, "Credentials.Create: nil request"},
		{"create without a name", func() error {
			_, err := c.Credentials.Create(ctx, &client.CredentialRequest{Credential: secret})
			return err
		}, "Credentials.Create: the request's Name is required"},
		{"create without data", func() error {
			_, err := c.Credentials.Create(ctx, &client.CredentialRequest{Name: "n", CredentialType: client.CredentialTypeSecret})
			return err
		}, "Credentials.Create: the request's Credential is required"},
		{"update nil", func() error { _, err := c.Credentials.Update(ctx, "cred_1", nil); return err }, "Credentials.Update: nil request"},
		{"update without a name", func() error {
			_, err := c.Credentials.Update(ctx, "cred_1", &client.CredentialRequest{Credential: secret})
			return err
		}, "Credentials.Update: the request's Name is required"},
		{"update without data", func() error {
			_, err := c.Credentials.Update(ctx, "cred_1", &client.CredentialRequest{Name: "n"})
			return err
		}, "Credentials.Update: the request's Credential is required"},
		{"update without an id", func() error {
			_, err := c.Credentials.Update(ctx, "", &client.CredentialRequest{Name: "n", Credential: secret})
			return err
		}, "credential id must not be empty"},
		{"get without an id", func() error { _, err := c.Credentials.Get(ctx, ""); return err }, "credential id must not be empty"},
		{"get with a blank id", func() error { _, err := c.Credentials.Get(ctx, "  "); return err }, "credential id must not be empty"},
		{"delete without an id", func() error { return c.Credentials.Delete(ctx, "") }, "credential id must not be empty"},
		{"totp nil", func() error { _, err := c.Credentials.SendTOTPCode(ctx, nil); return err }, "SendTOTPCode: nil request"},
		{"totp without an identifier", func() error {
			_, err := c.Credentials.SendTOTPCode(ctx, &client.TOTPCodeRequest{Content: "123456"})
			return err
		}, "TOTPIdentifier and Content are required"},
		{"totp without content", func() error {
			_, err := c.Credentials.SendTOTPCode(ctx, &client.TOTPCodeRequest{TOTPIdentifier: "ada@example.com"})
			return err
		}, "TOTPIdentifier and Content are required"},
	} {
		err := tc.call()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	if reqs := ts.requests(); len(reqs) != 0 {
		t.Errorf("%d requests were sent; the checks must refuse before sending: %+v", len(reqs), reqs)
	}
}

// TestCredentialErrors: the service's refusals come back as *client.Error
// with its detail, and a secret sent in the request is not repeated in the
// error.
func TestCredentialErrors(t *testing.T) {
	ts := newTestServer(t)
	ts.reply("GET /v1/credentials/{id}", http.StatusNotFound, `{"detail":"Credential cred_404 not found"}`)
	ts.reply("POST /v1/credentials", http.StatusUnprocessableEntity,
		`{"detail":[{"loc":["body","credential","card_number"],"msg":"Field required","type":"missing"}]}`)
	_, err := ts.client.Credentials.Get(t.Context(), "cred_404")
	if !errors.Is(err, client.ErrNotFound) || !strings.Contains(err.Error(), "Credential cred_404 not found") {
		t.Errorf("unknown credential: %v, want ErrNotFound with the service's detail", err)
	}
	_, err = ts.client.Credentials.Create(t.Context(), &client.CredentialRequest{Name: "card",
		Credential: &client.SecretCredential{SecretValue: "do-not-echo-me"}})
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(err.Error(), "card_number") {
		t.Errorf("a refused create: %v, want a 422 naming the field", err)
	}
	if err != nil && strings.Contains(err.Error(), "do-not-echo-me") {
		t.Errorf("the error repeats the secret: %v", err)
	}
}

// TestCredentialRetries: creating is not repeated after a failure that
// may have stored the credential; reading and replacing are.
func TestCredentialRetries(t *testing.T) {
	for _, tc := range []struct {
		name  string
		route string
		call  func(ctx context.Context, c *client.Client) error
		want  int
	}{
		{"create", "POST /v1/credentials", func(ctx context.Context, c *client.Client) error {
			_, err := c.Credentials.Create(ctx, &client.CredentialRequest{Name: "n", Credential: &client.SecretCredential{SecretValue: "v"}})
			return err
		}, 1},
		{"update", "POST /v1/credentials/{id}/update", func(ctx context.Context, c *client.Client) error {
			_, err := c.Credentials.Update(ctx, "cred_1", &client.CredentialRequest{Name: "n", Credential: &client.SecretCredential{SecretValue: "v"}})
			return err
		}, 3},
		{"get", "GET /v1/credentials/{id}", func(ctx context.Context, c *client.Client) error {
			_, err := c.Credentials.Get(ctx, "cred_1")
			return err
		}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServer(t, client.WithMaxRetries(2), client.WithRetryBackoff(time.Millisecond, time.Millisecond))
			ts.reply(tc.route, http.StatusServiceUnavailable, `{"detail":"try later"}`)
			if err := tc.call(t.Context(), ts.client); err == nil {
				t.Fatal("want the 503")
			}
			if n := len(ts.requests()); n != tc.want {
				t.Errorf("%d requests, want %d", n, tc.want)
			}
		})
	}
}

// TestCredentialsAll walks the pages of GET /v1/credentials with the
// caller's filters, 100 a page unless asked otherwise.
func TestCredentialsAll(t *testing.T) {
	ts := newTestServer(t)
	const total = 5
	ts.mux.HandleFunc("GET /v1/credentials", func(w http.ResponseWriter, r *http.Request) {
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		size, _ := strconv.Atoi(r.URL.Query().Get("page_size"))
		var items []string
		for i := (page - 1) * size; i < min(page*size, total); i++ {
			items = append(items, fmt.Sprintf(`{"credential_id":"cred_%d","credential":{"secret_label":null},"credential_type":"secret","name":"s%d"}`, i, i))
		}
		w.Write([]byte("[" + strings.Join(items, ",") + "]"))
	})
	opts := &client.ListCredentialsOptions{PageSize: 2, CredentialType: client.CredentialTypeSecret}
	var ids []string
	for c, err := range ts.client.Credentials.All(t.Context(), opts) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.CredentialID)
	}
	if strings.Join(ids, ",") != "cred_0,cred_1,cred_2,cred_3,cred_4" {
		t.Errorf("ids %v", ids)
	}
	reqs := ts.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 (pages of 2, 2 and 1)", len(reqs))
	}
	for i, r := range reqs {
		if q := url.Values(r.Query); q.Get("page") != strconv.Itoa(i+1) || q.Get("page_size") != "2" || q.Get("credential_type") != "secret" {
			t.Errorf("request %d query %v", i, r.Query)
		}
	}
	if opts.Page != 0 {
		t.Errorf("the caller's options were modified: %+v", opts)
	}

	ts = newTestServer(t)
	ts.reply("GET /v1/credentials", http.StatusOK, `[]`)
	for range ts.client.Credentials.All(t.Context(), nil) {
		t.Error("an empty list yielded an item")
	}
	if q := url.Values(ts.only().Query); q.Get("page") != "1" || q.Get("page_size") != "100" {
		t.Errorf("default paging: %v", q)
	}
}
