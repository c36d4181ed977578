package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/url"
)

// CredentialsService manages an organization's credentials (passwords with
// their second factor, credit cards and secrets) and the one-time codes
// pushed for runs waiting on them.
//
// A credential's secret goes in once, when it is created or updated, and
// never comes back: answers carry a password credential's username and
// second-factor settings, a card's last four digits and brand, a secret's
// label. Agents refer to a credential by its id (a credential parameter,
// the login block); the model driving the browser sees placeholders, and
// the engine types the real value into the field.
type CredentialsService service

// CredentialType is the kind of a credential.
type CredentialType string

// The kinds of credential.
const (
	CredentialTypePassword   CredentialType = "password"
	CredentialTypeCreditCard CredentialType = "credit_card"
	CredentialTypeSecret     CredentialType = "secret"
)

// TOTPType is how a password credential's second factor reaches a run.
type TOTPType string

// The second-factor methods.
const (
	// TOTPTypeAuthenticator: codes are made from the credential's TOTP
	// secret (RFC 6238), as an authenticator app makes them.
	TOTPTypeAuthenticator TOTPType = "authenticator"
	// TOTPTypeEmail and TOTPTypeText: codes arrive by e-mail or text
	// message and are pushed to the service for the credential's
	// TOTPIdentifier (CredentialsService.SendTOTPCode).
	TOTPTypeEmail   TOTPType = "email"
	TOTPTypeText    TOTPType = "text"
	TOTPTypePasskey TOTPType = "passkey"
	TOTPTypeNone    TOTPType = "none"
)

// CredentialVaultType names where a credential is kept. The daemon keeps
// every credential itself ("skyvern", the default); the hosted service can
// also read them from external vaults.
type CredentialVaultType string

// The vaults.
const (
	CredentialVaultSkyvern    CredentialVaultType = "skyvern"
	CredentialVaultBitwarden  CredentialVaultType = "bitwarden"
	CredentialVaultAzureVault CredentialVaultType = "azure_vault"
	CredentialVaultGCP        CredentialVaultType = "gcp"
	CredentialVaultCustom     CredentialVaultType = "custom"
)

// CredentialData is the secret part of a credential request: a
// *PasswordCredential, a *CreditCardCredential or a *SecretCredential.
type CredentialData interface {
	// CredentialType is the credential_type the data goes with.
	CredentialType() CredentialType
}

// PasswordCredential is a username and password, with an optional second
// factor: TOTP, a base32 authenticator secret from which codes are made
// locally, or TOTPIdentifier, the e-mail address or phone number codes are
// pushed for.
type PasswordCredential struct {
	Username       string   `json:"username"`
	Password       string   `json:"password"`
	TOTP           string   `json:"totp,omitempty"`
	TOTPType       TOTPType `json:"totp_type,omitempty"`
	TOTPIdentifier string   `json:"totp_identifier,omitempty"`
}

// CredentialType is CredentialTypePassword.
func (*PasswordCredential) CredentialType() CredentialType { return CredentialTypePassword }

// CreditCardCredential is a payment card. Every field but the billing ones
// is required.
type CreditCardCredential struct {
	CardNumber     string                    `json:"card_number"`
	CardCVV        string                    `json:"card_cvv"`
	CardExpMonth   string                    `json:"card_exp_month"`
	CardExpYear    string                    `json:"card_exp_year"`
	CardBrand      string                    `json:"card_brand"`
	CardHolderName string                    `json:"card_holder_name"`
	BillingAddress *CreditCardBillingAddress `json:"billing_address,omitempty"`
	BillingEmail   string                    `json:"billing_email,omitempty"`
	BillingPhone   string                    `json:"billing_phone,omitempty"`
}

// CredentialType is CredentialTypeCreditCard.
func (*CreditCardCredential) CredentialType() CredentialType { return CredentialTypeCreditCard }

// CreditCardBillingAddress is a card's billing address; every field is
// optional.
type CreditCardBillingAddress struct {
	Line1       string `json:"line1,omitempty"`
	Line2       string `json:"line2,omitempty"`
	City        string `json:"city,omitempty"`
	State       string `json:"state,omitempty"`
	StateCode   string `json:"state_code,omitempty"`
	PostalCode  string `json:"postal_code,omitempty"`
	Country     string `json:"country,omitempty"`
	CountryCode string `json:"country_code,omitempty"`
}

// SecretCredential is a single secret value (an API key, a PIN) with an
// optional label that answers show.
type SecretCredential struct {
	SecretValue string `json:"secret_value"`
	SecretLabel string `json:"secret_label,omitempty"`
}

// CredentialType is CredentialTypeSecret.
func (*SecretCredential) CredentialType() CredentialType { return CredentialTypeSecret }

// CredentialRequest creates or replaces a credential (upstream
// CreateCredentialRequest). CredentialType is taken from Credential when
// empty.
type CredentialRequest struct {
	Name           string              `json:"name"`
	CredentialType CredentialType      `json:"credential_type"`
	Credential     CredentialData      `json:"credential"`
	VaultType      CredentialVaultType `json:"vault_type,omitempty"`
}

// MarshalJSON fills credential_type from the data when it is empty.
func (r CredentialRequest) MarshalJSON() ([]byte, error) {
	type fields CredentialRequest
	f := fields(r)
	if f.CredentialType == "" && f.Credential != nil {
		f.CredentialType = f.Credential.CredentialType()
	}
	return json.Marshal(f)
}

// Credential is a credential as the service answers it: never its secret.
type Credential struct {
	CredentialID   string               `json:"credential_id"`
	Credential     CredentialInfo       `json:"credential"`
	CredentialType CredentialType       `json:"credential_type"`
	Name           string               `json:"name"`
	VaultType      *CredentialVaultType `json:"vault_type"`
	// BrowserProfileID is the browser profile saved from a test of the
	// credential's login, if any.
	BrowserProfileID         *string         `json:"browser_profile_id"`
	TestedURL                *string         `json:"tested_url"`
	UserContext              *string         `json:"user_context"`
	SaveBrowserSessionIntent *bool           `json:"save_browser_session_intent"`
	FolderID                 *string         `json:"folder_id"`
	ProxyLocation            json.RawMessage `json:"proxy_location"`
	ProxySessionID           *string         `json:"proxy_session_id"`
}

// CredentialInfo is what an answer shows of a credential's data, by its
// type: a password credential's Username, TOTPType and TOTPIdentifier; a
// card's LastFour and Brand; a secret's SecretLabel.
type CredentialInfo struct {
	Username       string   `json:"username,omitempty"`
	TOTPType       TOTPType `json:"totp_type,omitempty"`
	TOTPIdentifier *string  `json:"totp_identifier,omitempty"`
	LastFour       string   `json:"last_four,omitempty"`
	Brand          string   `json:"brand,omitempty"`
	SecretLabel    *string  `json:"secret_label,omitempty"`
}

// MarshalJSON writes the shape of the credential's type, as the service
// does: {username, totp_type, totp_identifier} for a password,
// {last_four, brand} for a card, {secret_label} for a secret.
func (c CredentialInfo) MarshalJSON() ([]byte, error) {
	switch {
	case c.LastFour != "" || c.Brand != "":
		return json.Marshal(struct {
			LastFour string `json:"last_four"`
			Brand    string `json:"brand"`
		}{c.LastFour, c.Brand})
	case c.Username != "":
		t := c.TOTPType
		if t == "" {
			t = TOTPTypeNone
		}
		return json.Marshal(struct {
			Username       string   `json:"username"`
			TOTPType       TOTPType `json:"totp_type"`
			TOTPIdentifier *string  `json:"totp_identifier"`
		}{c.Username, t, c.TOTPIdentifier})
	default:
		return json.Marshal(struct {
			SecretLabel *string `json:"secret_label"`
		}{c.SecretLabel})
	}
}

// ListCredentialsOptions filters and pages GET /v1/credentials.
type ListCredentialsOptions struct {
	Page           int // 1-based; 0 means 1
	PageSize       int // 0 means the server default (10)
	CredentialType CredentialType
	VaultType      CredentialVaultType
	Search         string // in the name (and a password credential's username); up to 200 characters
}

// OTPType is the kind of a pushed one-time code.
type OTPType string

// The kinds of one-time code.
const (
	OTPTypeTOTP      OTPType = "totp"
	OTPTypeMagicLink OTPType = "magic_link"
)

// TOTPCodeRequest pushes a one-time code, or the message that holds one
// (an e-mail, a text), for the run waiting on TOTPIdentifier (upstream
// TOTPCodeCreate). The code is read from Content: the whole of it when it
// is a code, else the first code-like number in it, else a link in it
// (a magic link).
type TOTPCodeRequest struct {
	TOTPIdentifier string `json:"totp_identifier"`
	Content        string `json:"content"`
	TaskID         string `json:"task_id,omitempty"`
	WorkflowID     string `json:"workflow_id,omitempty"`
	WorkflowRunID  string `json:"workflow_run_id,omitempty"`
	Source         string `json:"source,omitempty"`
	// ExpiredAt is when the code stops being valid; the default is 10
	// minutes after it is received.
	ExpiredAt *Time `json:"expired_at,omitempty"`
}

// TOTPCode is a stored one-time code.
type TOTPCode struct {
	TOTPIdentifier string   `json:"totp_identifier"`
	TaskID         *string  `json:"task_id"`
	WorkflowID     *string  `json:"workflow_id"`
	WorkflowRunID  *string  `json:"workflow_run_id"`
	Source         *string  `json:"source"`
	Content        string   `json:"content"`
	ExpiredAt      *Time    `json:"expired_at"`
	Type           *OTPType `json:"type"`
	TOTPCodeID     string   `json:"totp_code_id"`
	Code           string   `json:"code"`
	OrganizationID string   `json:"organization_id"`
	CreatedAt      Time     `json:"created_at"`
	ModifiedAt     Time     `json:"modified_at"`
	OTPType        *OTPType `json:"otp_type"`
}

func checkCredentialRequest(method string, req *CredentialRequest) error {
	switch {
	case req == nil:
		return fmt.Errorf("client: Credentials.%s: nil request", method)
	case req.Name == "":
		return fmt.Errorf("client: Credentials.%s: the request's Name is required", method)
	case req.Credential == nil:
		return fmt.Errorf("client: Credentials.%s: the request's Credential is required", method)
	}
	return nil
}

// Create stores a new credential (POST /v1/credentials).
func (s *CredentialsService) Create(ctx context.Context, req *CredentialRequest, opts ...Option) (*Credential, error) {
	if err := checkCredentialRequest("Create", req); err != nil {
		return nil, err
	}
	out := new(Credential)
	_, err := s.client.do(ctx, request{method: "POST", path: "/v1/credentials", body: req}, out, opts)
	return nil2(out, err)
}

// List returns one page of credentials, newest first (GET
// /v1/credentials); o may be nil.
func (s *CredentialsService) List(ctx context.Context, o *ListCredentialsOptions, opts ...Option) ([]*Credential, error) {
	q := url.Values{}
	if o != nil {
		setInt(q, "page", o.Page)
		setInt(q, "page_size", o.PageSize)
		setString(q, "credential_type", string(o.CredentialType))
		setString(q, "vault_type", string(o.VaultType))
		setString(q, "search", o.Search)
	}
	var out []*Credential
	_, err := s.client.do(ctx, request{method: "GET", path: "/v1/credentials", query: q, idempotent: true}, &out, opts)
	return out, err
}

// All returns an iterator over every credential matching o; see
// AgentsService.All for its behaviour.
func (s *CredentialsService) All(ctx context.Context, o *ListCredentialsOptions, opts ...Option) iter.Seq2[*Credential, error] {
	return paginate(o, func(o *ListCredentialsOptions) ([]*Credential, error) { return s.List(ctx, o, opts...) })
}

func (o *ListCredentialsOptions) pageFields() (page, pageSize *int) { return &o.Page, &o.PageSize }

// Get returns a credential (GET /v1/credentials/{id}).
func (s *CredentialsService) Get(ctx context.Context, credentialID string, opts ...Option) (*Credential, error) {
	if err := requireID("credential id", credentialID); err != nil {
		return nil, err
	}
	out := new(Credential)
	_, err := s.client.do(ctx, request{method: "GET", path: pathf("/v1/credentials/%s", credentialID), idempotent: true}, out, opts)
	return nil2(out, err)
}

// Update replaces a credential's name and data, keeping its id (POST
// /v1/credentials/{id}/update). The type may not change.
func (s *CredentialsService) Update(ctx context.Context, credentialID string, req *CredentialRequest, opts ...Option) (*Credential, error) {
	if err := requireID("credential id", credentialID); err != nil {
		return nil, err
	}
	if err := checkCredentialRequest("Update", req); err != nil {
		return nil, err
	}
	out := new(Credential)
	_, err := s.client.do(ctx, request{method: "POST", path: pathf("/v1/credentials/%s/update", credentialID), body: req, idempotent: true}, out, opts)
	return nil2(out, err)
}

// Delete deletes a credential (POST /v1/credentials/{id}/delete). Agents
// that name it fail when a run needs it.
func (s *CredentialsService) Delete(ctx context.Context, credentialID string, opts ...Option) error {
	if err := requireID("credential id", credentialID); err != nil {
		return err
	}
	_, err := s.client.do(ctx, request{method: "POST", path: pathf("/v1/credentials/%s/delete", credentialID)}, nil, opts)
	return err
}

// SendTOTPCode pushes a one-time code for the run waiting on its
// identifier (POST /v1/credentials/totp).
func (s *CredentialsService) SendTOTPCode(ctx context.Context, req *TOTPCodeRequest, opts ...Option) (*TOTPCode, error) {
	switch {
	case req == nil:
		return nil, errors.New("client: Credentials.SendTOTPCode: nil request")
	case req.TOTPIdentifier == "" || req.Content == "":
		return nil, errors.New("client: Credentials.SendTOTPCode: the request's TOTPIdentifier and Content are required")
	}
	out := new(TOTPCode)
	_, err := s.client.do(ctx, request{method: "POST", path: "/v1/credentials/totp", body: req}, out, opts)
	return nil2(out, err)
}

// LoginRequest starts a run that signs in to a site with a stored
// credential (POST /v1/run/tasks/login). The run is an agent run of one
// login block, answered as one.
type LoginRequest struct {
	// CredentialType is where the credential is kept; "skyvern" (the
	// default when empty) for the organization's own credentials, the
	// only kind the daemon has.
	CredentialType string `json:"credential_type"`
	CredentialID   string `json:"credential_id,omitempty"`
	// URL is the sign-in page; Prompt, when given, says how to sign in
	// (it is then the model's goal).
	URL              string            `json:"url,omitempty"`
	Prompt           string            `json:"prompt,omitempty"`
	WebhookURL       string            `json:"webhook_url,omitempty"`
	TOTPIdentifier   string            `json:"totp_identifier,omitempty"`
	TOTPURL          string            `json:"totp_url,omitempty"`
	BrowserSessionID string            `json:"browser_session_id,omitempty"`
	BrowserProfileID string            `json:"browser_profile_id,omitempty"`
	BrowserAddress   string            `json:"browser_address,omitempty"`
	ExtraHTTPHeaders map[string]string `json:"extra_http_headers,omitempty"`
}

// Login starts a run that signs in with a stored credential (POST
// /v1/run/tasks/login); wait for it with Wait.
func (s *RunsService) Login(ctx context.Context, req *LoginRequest, opts ...Option) (*Run, error) {
	if req == nil || req.CredentialID == "" {
		return nil, errors.New("client: Runs.Login: the request's CredentialID is required")
	}
	body := *req
	if body.CredentialType == "" {
		body.CredentialType = "skyvern"
	}
	out := new(Run)
	_, err := s.client.do(ctx, request{method: "POST", path: "/v1/run/tasks/login", body: &body}, out, opts)
	return nil2(out, err)
}
