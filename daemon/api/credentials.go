package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/internal/totp"
)

// Credentials: POST/GET /v1/credentials, GET /v1/credentials/{id},
// POST /v1/credentials/{id}/update and /delete, POST /v1/credentials/totp.
//
// A credential's secret is read here, checked, and handed to the store,
// which seals it; it is never written back, logged, or repeated in an
// error: the validation entries of secret fields carry no input.

// credentialBody is the body of a create or an update (upstream
// CreateCredentialRequest).
type credentialBody struct {
	Name           *string         `json:"name"`
	CredentialType *string         `json:"credential_type"`
	Credential     json.RawMessage `json:"credential"`
	VaultType      *string         `json:"vault_type"`
}

var (
	credentialTypes = []string{"password", "credit_card", "secret"}
	vaultTypes      = []string{"skyvern", "bitwarden", "azure_vault", "gcp", "custom"}
	totpTypes       = []string{"authenticator", "email", "text", "passkey", "none"}
)

// enumError is the hosted service's entry for a value outside an enum.
func enumError(values []string, input any, loc ...any) client.ValidationError {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = "'" + v + "'"
	}
	list := strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]
	return fieldError("enum", "Input should be "+list, input, loc...)
}

func contains(values []string, v string) bool {
	for _, x := range values {
		if x == v {
			return true
		}
	}
	return false
}

// readCredential reads and checks a create or update body; every problem
// is reported at once.
func readCredential(r *http.Request) (*store.CredentialInput, error) {
	var body credentialBody
	if err := decodeJSONBody(r, &body); err != nil {
		return nil, err
	}
	var errs []client.ValidationError
	if body.Name == nil {
		errs = append(errs, missingField("body", "name"))
	}
	typ := ""
	switch {
	case body.CredentialType == nil:
		errs = append(errs, missingField("body", "credential_type"))
	case !contains(credentialTypes, *body.CredentialType):
		errs = append(errs, enumError(credentialTypes, *body.CredentialType, "body", "credential_type"))
	default:
		typ = *body.CredentialType
	}
	if v := body.VaultType; v != nil && *v != "skyvern" {
		if contains(vaultTypes, *v) {
			errs = append(errs, valueError(fmt.Sprintf("this daemon keeps credentials itself: vault_type must be skyvern or absent, not %s (external vaults are read by the hosted service only)", *v), *v, "body", "vault_type"))
		} else {
			errs = append(errs, enumError(vaultTypes, *v, "body", "vault_type"))
		}
	}
	if isNull(body.Credential) {
		errs = append(errs, missingField("body", "credential"))
	}
	if len(errs) > 0 || typ == "" {
		return nil, invalid(errs)
	}
	in, cerrs := readCredentialData(client.CredentialType(typ), body.Credential)
	if err := invalid(cerrs); err != nil {
		return nil, err
	}
	in.Name = *body.Name
	return in, nil
}

// readCredentialData decodes and checks the credential's data for its
// type, and returns what answers will show and the secret to seal.
func readCredentialData(typ client.CredentialType, raw json.RawMessage) (*store.CredentialInput, []client.ValidationError) {
	loc := func(field string) []any { return []any{"body", "credential", field} }
	var errs []client.ValidationError
	required := func(v, field string) {
		if v == "" {
			errs = append(errs, fieldError("string_too_short", "String should have at least 1 character", nil, loc(field)...))
		}
	}
	var data client.CredentialData
	var info client.CredentialInfo
	switch typ {
	case client.CredentialTypePassword:
		var p client.PasswordCredential
		if err := decodeJSON(raw, &p, "credential"); err != nil {
			return nil, validationOf(err)
		}
		required(p.Username, "username")
		required(p.Password, "password")
		if p.TOTP != "" {
			if err := totp.Valid(p.TOTP); err != nil {
				errs = append(errs, valueError(err.Error(), nil, loc("totp")...))
			}
			if p.TOTPType == "" {
				p.TOTPType = client.TOTPTypeAuthenticator
			}
		}
		switch {
		case p.TOTPType == "":
			p.TOTPType = client.TOTPTypeNone
		case !contains(totpTypes, string(p.TOTPType)):
			errs = append(errs, enumError(totpTypes, string(p.TOTPType), loc("totp_type")...))
		case p.TOTPType == client.TOTPTypeAuthenticator && p.TOTP == "":
			errs = append(errs, valueError("totp_type authenticator needs the authenticator secret in totp (base32, as the site showed it when the second factor was set up)", nil, loc("totp")...))
		}
		info = client.CredentialInfo{Username: p.Username, TOTPType: p.TOTPType}
		if p.TOTPIdentifier != "" {
			id := p.TOTPIdentifier
			info.TOTPIdentifier = &id
		}
		data = &p
	case client.CredentialTypeCreditCard:
		var c client.CreditCardCredential
		if err := decodeJSON(raw, &c, "credential"); err != nil {
			return nil, validationOf(err)
		}
		for field, v := range map[string]string{"card_number": c.CardNumber, "card_cvv": c.CardCVV, "card_exp_month": c.CardExpMonth,
			"card_exp_year": c.CardExpYear, "card_brand": c.CardBrand, "card_holder_name": c.CardHolderName} {
			required(v, field)
		}
		if c.CardNumber != "" {
			digits := strings.NewReplacer(" ", "", "-", "").Replace(c.CardNumber)
			switch {
			case !allDigits(digits) || len(digits) < 12 || len(digits) > 19:
				errs = append(errs, valueError("a card number is 12 to 19 digits (spaces and dashes are ignored)", nil, loc("card_number")...))
			case !luhn(digits):
				errs = append(errs, valueError("the card number fails its check digit (Luhn): a digit is probably mistyped", nil, loc("card_number")...))
			}
			c.CardNumber = digits
		}
		if c.CardCVV != "" && (!allDigits(c.CardCVV) || len(c.CardCVV) < 3 || len(c.CardCVV) > 4) {
			errs = append(errs, valueError("a card's CVV is 3 or 4 digits", nil, loc("card_cvv")...))
		}
		if m, err := strconv.Atoi(c.CardExpMonth); c.CardExpMonth != "" && (err != nil || m < 1 || m > 12) {
			errs = append(errs, valueError("the expiry month is a number from 1 to 12", c.CardExpMonth, loc("card_exp_month")...))
		}
		if y := c.CardExpYear; y != "" && (!allDigits(y) || len(y) != 2 && len(y) != 4) {
			errs = append(errs, valueError("the expiry year is 2 or 4 digits", y, loc("card_exp_year")...))
		}
		if len(c.CardNumber) >= 4 {
			info.LastFour = c.CardNumber[len(c.CardNumber)-4:]
		}
		info.Brand = c.CardBrand
		data = &c
	case client.CredentialTypeSecret:
		var s client.SecretCredential
		if err := decodeJSON(raw, &s, "credential"); err != nil {
			return nil, validationOf(err)
		}
		required(s.SecretValue, "secret_value")
		if s.SecretLabel != "" {
			label := s.SecretLabel
			info.SecretLabel = &label
		}
		data = &s
	}
	if len(errs) > 0 {
		return nil, errs
	}
	secret, err := json.Marshal(data)
	if err != nil {
		return nil, []client.ValidationError{valueError("the credential cannot be encoded", nil, "body", "credential")}
	}
	return &store.CredentialInput{Type: typ, Info: info, Secret: secret}, nil
}

// validationOf returns the entries of a 422 error, or one entry for any
// other error.
func validationOf(err error) []client.ValidationError {
	if e, ok := err.(*Error); ok && len(e.Validation) > 0 {
		return e.Validation
	}
	return []client.ValidationError{valueError(err.Error(), nil, "body", "credential")}
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// luhn reports whether a card number's check digit is right.
func luhn(digits string) bool {
	sum := 0
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if (len(digits)-1-i)%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

// handleCreateCredential serves POST /v1/credentials.
func (s credentialsAPI) handleCreateCredential(w http.ResponseWriter, r *http.Request) {
	in, err := readCredential(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	out, err := s.credentials.Create(r.Context(), organization(r.Context()).ID, in)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

// handleUpdateCredential serves POST /v1/credentials/{id}/update.
func (s credentialsAPI) handleUpdateCredential(w http.ResponseWriter, r *http.Request) {
	in, err := readCredential(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	out, err := s.credentials.Update(r.Context(), organization(r.Context()).ID, r.PathValue("id"), in)
	s.reply(w, r, out, err)
}

// handleListCredentials serves GET /v1/credentials.
func (s credentialsAPI) handleListCredentials(w http.ResponseWriter, r *http.Request) {
	qr := newQueryReader(r)
	page, size := qr.paging(10, 0, 0)
	typ := qr.string("credential_type")
	vault := qr.string("vault_type")
	search := qr.string("search")
	err := qr.err()
	var errs []client.ValidationError
	if typ != "" && !contains(credentialTypes, typ) {
		errs = append(errs, enumError(credentialTypes, typ, "query", "credential_type"))
	}
	if vault != "" && !contains(vaultTypes, vault) {
		errs = append(errs, enumError(vaultTypes, vault, "query", "vault_type"))
	}
	if len(search) > 200 {
		errs = append(errs, fieldError("string_too_long", "String should have at most 200 characters", nil, "query", "search"))
	}
	if err == nil {
		err = invalid(errs)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	out := []*client.Credential{}
	if vault == "" || vault == "skyvern" {
		out, err = s.credentials.List(r.Context(), organization(r.Context()).ID,
			store.CredentialQuery{Page: page, PageSize: size, Type: client.CredentialType(typ), Search: search})
		if err != nil {
			s.error(w, r, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// totpLifetime is how long a pushed code stays usable when the push does
// not say.
const totpLifetime = 10 * time.Minute

// handleSendTOTPCode serves POST /v1/credentials/totp: a one-time code,
// or the message holding one, pushed for the run waiting on its
// totp_identifier.
func (s credentialsAPI) handleSendTOTPCode(w http.ResponseWriter, r *http.Request) {
	var body struct {
		TOTPIdentifier *string      `json:"totp_identifier"`
		Content        *string      `json:"content"`
		TaskID         *string      `json:"task_id"`
		WorkflowID     *string      `json:"workflow_id"`
		WorkflowRunID  *string      `json:"workflow_run_id"`
		Source         *string      `json:"source"`
		ExpiredAt      *client.Time `json:"expired_at"`
	}
	if err := decodeJSONBody(r, &body); err != nil {
		s.error(w, r, err)
		return
	}
	var errs []client.ValidationError
	if body.TOTPIdentifier == nil {
		errs = append(errs, missingField("body", "totp_identifier"))
	} else if strings.TrimSpace(*body.TOTPIdentifier) == "" || strings.IndexByte(*body.TOTPIdentifier, 0) >= 0 {
		errs = append(errs, valueError("totp_identifier must name the e-mail address or phone number the code was sent to", nil, "body", "totp_identifier"))
	}
	var code string
	var otp client.OTPType
	if body.Content == nil {
		errs = append(errs, missingField("body", "content"))
	} else {
		link, ok := false, false
		code, link, ok = totp.FindCode(*body.Content)
		otp = client.OTPTypeTOTP
		if link {
			otp = client.OTPTypeMagicLink
		}
		if !ok {
			errs = append(errs, valueError("no one-time code in content: send the code itself, or a message holding a code of 4 to 8 digits or a link", nil, "body", "content"))
		}
	}
	if err := invalid(errs); err != nil {
		s.error(w, r, err)
		return
	}
	now := client.NewTime(s.now())
	expires := body.ExpiredAt
	if expires == nil {
		t := client.NewTime(now.Add(totpLifetime))
		expires = &t
	}
	out := &client.TOTPCode{
		TOTPIdentifier: *body.TOTPIdentifier,
		TaskID:         body.TaskID,
		WorkflowID:     body.WorkflowID,
		WorkflowRunID:  body.WorkflowRunID,
		Source:         body.Source,
		Content:        *body.Content,
		ExpiredAt:      expires,
		TOTPCodeID:     s.ids.Next(ids.PrefixTOTPCode),
		Code:           code,
		OrganizationID: organization(r.Context()).ID,
		CreatedAt:      now,
		ModifiedAt:     now,
		OTPType:        &otp,
	}
	if err := s.credentials.PutTOTPCode(r.Context(), out.OrganizationID, out); err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
