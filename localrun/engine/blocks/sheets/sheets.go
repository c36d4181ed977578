// Package sheets reads and writes Google Sheets through the Sheets API
// (v4), signed in as a Google service account whose JSON key the caller
// gives: the cells of a range (as rows, or as objects keyed by the header
// row), and rows appended or written, objects placed under the sheet's
// column headers. It takes plain values (the key, the spreadsheet's id,
// the HTTP clients to use) and returns plain values.
package sheets

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/jwt"
)

// DefaultEndpoint is the Sheets API.
const DefaultEndpoint = "https://sheets.googleapis.com"

const (
	sheetsScope       = "https://www.googleapis.com/auth/spreadsheets"
	googleTokenURL    = "https://oauth2.googleapis.com/token"
	maxSheetsResponse = 32 << 20
)

var spreadsheetIDRE = regexp.MustCompile(`/spreadsheets/d/([A-Za-z0-9_-]+)`)

// SpreadsheetID reads the id out of a spreadsheet's URL, or takes an id
// given as it is.
func SpreadsheetID(s string) (string, error) {
	s = strings.TrimSpace(s)
	if m := spreadsheetIDRE.FindStringSubmatch(s); m != nil {
		return m[1], nil
	}
	if s != "" && !strings.ContainsAny(s, "/:?# ") {
		return s, nil
	}
	return "", fmt.Errorf("spreadsheet_url %q is neither a spreadsheet's address (https://docs.google.com/spreadsheets/d/ID/...) nor its id", s)
}

// A1Range is the A1 range of a sheet name and a range: 'Sheet'!A1:C9, the
// whole sheet without a range, the first sheet's columns A to ZZ without
// either.
func A1Range(sheet, rng string) string {
	sheet, rng = strings.TrimSpace(sheet), strings.TrimSpace(rng)
	if sheet == "" {
		if rng == "" {
			return "A:ZZ"
		}
		return rng
	}
	quoted := "'" + strings.ReplaceAll(sheet, "'", "''") + "'"
	if rng == "" {
		return quoted
	}
	return quoted + "!" + rng
}

// Key is what a Google service account's JSON key holds that signing in
// needs.
type Key struct {
	Type         string `json:"type"`
	ClientEmail  string `json:"client_email"`
	PrivateKey   string `json:"private_key"`
	PrivateKeyID string `json:"private_key_id"`
	TokenURI     string `json:"token_uri"`
}

// ParseKey reads a service account's JSON key; ok is false when keyJSON
// is not one (an object with type "service_account", client_email and
// private_key). The key's text never reaches an error: it holds the
// private key.
func ParseKey(keyJSON string) (key Key, ok bool) {
	if json.Unmarshal([]byte(keyJSON), &key) != nil || key.Type != "service_account" || key.ClientEmail == "" || key.PrivateKey == "" {
		return Key{}, false
	}
	if key.TokenURI == "" {
		key.TokenURI = googleTokenURL
	}
	return key, true
}

// Conn says how to reach Google.
type Conn struct {
	// HTTP reaches the Sheets API (nil: http.DefaultClient).
	HTTP *http.Client
	// Endpoint is the Sheets API; "" means DefaultEndpoint.
	Endpoint string
	// Tokens fetches the sign-in tokens from the key's token_uri, which
	// the key's owner gives (the run's egress guard); nil: HTTP.
	Tokens *http.Client
	// CheckTokenURL says why the key's token_uri may not be reached, for
	// a clear refusal before signing in; nil checks nothing.
	CheckTokenURL func(ctx context.Context, rawURL string) error
}

// Spreadsheet is the Sheets API of one spreadsheet, signed in.
type Spreadsheet struct {
	http     *http.Client
	endpoint string
	id       string
	account  string // the service account's email, for errors
}

// Open signs in as the service account of key and returns the API of the
// spreadsheet id.
func Open(ctx context.Context, key Key, id string, c Conn) (*Spreadsheet, error) {
	cfg := &jwt.Config{Email: key.ClientEmail, PrivateKey: []byte(key.PrivateKey), PrivateKeyID: key.PrivateKeyID,
		Scopes: []string{sheetsScope}, TokenURL: key.TokenURI}
	base := c.HTTP
	if base == nil {
		base = http.DefaultClient
	}
	endpoint := strings.TrimRight(c.Endpoint, "/")
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	tokens := base
	if c.CheckTokenURL != nil {
		// The early check gives the clear refusal (the token source words
		// its errors in its own text); the client checks every connection.
		if err := c.CheckTokenURL(ctx, key.TokenURI); err != nil {
			return nil, fmt.Errorf("signing in as service account %s: the key's token_uri is not reachable: %v", key.ClientEmail, err)
		}
	}
	if c.Tokens != nil {
		tokens = c.Tokens
	}
	src := cfg.TokenSource(context.WithValue(ctx, oauth2.HTTPClient, tokens))
	hc := &http.Client{Transport: &oauth2.Transport{Source: src, Base: base.Transport}}
	return &Spreadsheet{http: hc, endpoint: endpoint, id: id, account: key.ClientEmail}, nil
}

// ID is the spreadsheet's id.
func (s *Spreadsheet) ID() string { return s.id }
