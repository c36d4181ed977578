package blocks

// Google Sheets blocks: google_sheets_read and google_sheets_write, through
// the Sheets API (v4) signed in as a Google service account. The hosted
// service signs in with its own Google application on the user's behalf; a
// local daemon has none, so the block's credential_id names a secret
// credential that holds a service account's JSON key, and the spreadsheet
// is shared with that account's email address.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/jwt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/localrun/engine/secrets"
)

// DefaultSheetsEndpoint is the Sheets API; Env.SheetsEndpoint replaces it
// (tests point it at a server of their own).
const DefaultSheetsEndpoint = "https://sheets.googleapis.com"

const (
	sheetsScope       = "https://www.googleapis.com/auth/spreadsheets"
	googleTokenURL    = "https://oauth2.googleapis.com/token"
	maxSheetsResponse = 32 << 20
)

var spreadsheetIDRE = regexp.MustCompile(`/spreadsheets/d/([A-Za-z0-9_-]+)`)

// spreadsheetID reads the id out of a spreadsheet's URL, or takes an id
// given as it is.
func spreadsheetID(s string) (string, error) {
	s = strings.TrimSpace(s)
	if m := spreadsheetIDRE.FindStringSubmatch(s); m != nil {
		return m[1], nil
	}
	if s != "" && !strings.ContainsAny(s, "/:?# ") {
		return s, nil
	}
	return "", fmt.Errorf("spreadsheet_url %q is neither a spreadsheet's address (https://docs.google.com/spreadsheets/d/ID/...) nor its id", s)
}

// a1Range is the A1 range of a sheet name and a range: 'Sheet'!A1:C9, the
// whole sheet without a range, the first sheet's columns A to ZZ without
// either.
func a1Range(sheet, rng string) string {
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

func checkSheets(b client.Block) error {
	label, typ := b.Base().Label, b.BlockType()
	var url, cred string
	switch x := b.(type) {
	case *client.GoogleSheetsReadBlock:
		url, cred = x.SpreadsheetURL, x.CredentialID
	case *client.GoogleSheetsWriteBlock:
		url, cred = x.SpreadsheetURL, x.CredentialID
		if m := x.WriteMode; m != "" && m != "append" && m != "update" {
			return fmt.Errorf("block %q (%s): write_mode %q is not append or update", label, typ, m)
		}
		if strings.TrimSpace(x.Values) == "" {
			return fmt.Errorf("block %q (%s) has no values to write", label, typ)
		}
	}
	if strings.TrimSpace(url) == "" {
		return fmt.Errorf("block %q (%s) has no spreadsheet_url", label, typ)
	}
	if !strings.Contains(url, "{{") {
		if _, err := spreadsheetID(url); err != nil {
			return fmt.Errorf("block %q (%s): %w", label, typ, err)
		}
	}
	if strings.TrimSpace(cred) == "" {
		return fmt.Errorf("block %q (%s) has no credential_id: this daemon signs in to Google as a service account, "+
			"whose JSON key a secret credential holds (the spreadsheet shared with the account's email); see docs/blocks.md", label, typ)
	}
	return nil
}

// serviceAccount is what a Google service account's JSON key holds that
// signing in needs.
type serviceAccount struct {
	Type         string `json:"type"`
	ClientEmail  string `json:"client_email"`
	PrivateKey   string `json:"private_key"`
	PrivateKeyID string `json:"private_key_id"`
	TokenURI     string `json:"token_uri"`
}

// sheetsAPI is the Sheets API of one spreadsheet, signed in.
type sheetsAPI struct {
	http     *http.Client
	endpoint string
	id       string
	account  string // the service account's email, for errors
}

// sheets signs in with the service account the credential names and
// returns the API of the spreadsheet.
func (in sheetsBlocks) sheets(ctx context.Context, sc *scope, spreadsheetURL, credentialID string) (*sheetsAPI, error) {
	rawURL, err := sc.render(spreadsheetURL)
	if err != nil {
		return nil, err
	}
	id, err := spreadsheetID(rawURL)
	if err != nil {
		return nil, err
	}
	ref := parameterRef(credentialID)
	key := ref
	if _, ok := in.params[key].(map[string]any); !ok {
		key = blockCredentialKey(ref)
	}
	cred, ok := in.params[key].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("credential_id %q names neither a credential parameter of the agent nor a credential read before the run", ref)
	}
	if _, ok := cred["secret_value"]; !ok {
		return nil, fmt.Errorf("credential_id %q is not a secret credential (its secret value must be a service account's JSON key)", ref)
	}
	keyJSON, _, err := in.secrets.Reveal(ctx, secrets.Placeholder(key, "secret_value"))
	if err != nil {
		return nil, err
	}
	var sa serviceAccount
	// The key's own text never reaches an error: it holds the private key.
	if json.Unmarshal([]byte(keyJSON), &sa) != nil || sa.Type != "service_account" || sa.ClientEmail == "" || sa.PrivateKey == "" {
		return nil, fmt.Errorf("the secret of credential %q is not a Google service account's JSON key (an object with type \"service_account\", client_email and private_key)", ref)
	}
	if sa.TokenURI == "" {
		sa.TokenURI = googleTokenURL
	}
	cfg := &jwt.Config{Email: sa.ClientEmail, PrivateKey: []byte(sa.PrivateKey), PrivateKeyID: sa.PrivateKeyID,
		Scopes: []string{sheetsScope}, TokenURL: sa.TokenURI}
	base := in.http
	if base == nil {
		base = http.DefaultClient
	}
	endpoint := strings.TrimRight(in.endpoint, "/")
	if endpoint == "" {
		endpoint = DefaultSheetsEndpoint
	}
	// The key's token_uri is the organization's to give: the token is
	// fetched through the run's guard. The Sheets API is the operator's
	// (Env.SheetsEndpoint, else Google's), reached as the engine's client
	// reaches it.
	tokens := base
	if in.guard != nil {
		// The early check gives the clear refusal (the token source words
		// its errors in its own text); the client checks every connection.
		if err := in.guard.CheckURL(ctx, sa.TokenURI); err != nil {
			return nil, fmt.Errorf("signing in as service account %s: the key's token_uri is not reachable: %v", sa.ClientEmail, err)
		}
		tokens = in.guard.HTTPClient(0)
	}
	src := cfg.TokenSource(context.WithValue(ctx, oauth2.HTTPClient, tokens))
	hc := &http.Client{Transport: &oauth2.Transport{Source: src, Base: base.Transport}}
	return &sheetsAPI{http: hc, endpoint: endpoint, id: id, account: sa.ClientEmail}, nil
}

// call sends one request and decodes the answer into out.
func (s *sheetsAPI) call(ctx context.Context, method, path string, query url.Values, body, out any) error {
	u := s.endpoint + "/v4/spreadsheets/" + url.PathEscape(s.id) + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.http.Do(req)
	if err != nil {
		var re *oauth2.RetrieveError
		var refused *egress.Error
		if errors.As(err, &refused) {
			return fmt.Errorf("signing in as service account %s: the key's token_uri is not reachable: %v", s.account, refused)
		}
		if errors.As(err, &re) {
			return fmt.Errorf("Google refused the sign-in of service account %s: %s", s.account, strings.TrimSpace(re.ErrorDescription+" "+re.ErrorCode))
		}
		return fmt.Errorf("the Sheets API cannot be reached: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxSheetsResponse))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error struct {
				Message string `json:"message"`
				Status  string `json:"status"`
			} `json:"error"`
		}
		json.Unmarshal(data, &e)
		msg := fmt.Sprintf("the Sheets API answered %d %s: %s", resp.StatusCode, e.Error.Status, e.Error.Message)
		if resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusNotFound {
			msg += fmt.Sprintf(" (is spreadsheet %s shared with %s?)", s.id, s.account)
		}
		return errors.New(msg)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("the Sheets API's answer is not the JSON expected: %v", err)
	}
	return nil
}

// values reads a range's cells, as formatted.
func (s *sheetsAPI) values(ctx context.Context, rng string) ([][]any, error) {
	var got struct {
		Values [][]any `json:"values"`
	}
	err := s.call(ctx, http.MethodGet, "/values/"+url.PathEscape(rng), url.Values{"majorDimension": {"ROWS"}}, nil, &got)
	return got.Values, err
}

func (in sheetsBlocks) sheetsRead(ctx context.Context, b *client.GoogleSheetsReadBlock, sc *scope) (any, error) {
	api, err := in.sheets(ctx, sc, b.SpreadsheetURL, b.CredentialID)
	if err != nil {
		return nil, err
	}
	sheet, rng := b.SheetName, b.Range
	if err := sc.renderAll(&sheet, &rng); err != nil {
		return nil, err
	}
	rows, err := api.values(ctx, a1Range(sheet, rng))
	if err != nil {
		return nil, err
	}
	if b.HasHeaderRow != nil && !*b.HasHeaderRow {
		out := make([]any, len(rows))
		for i, r := range rows {
			out[i] = r
		}
		return out, nil
	}
	out := []any{}
	if len(rows) == 0 {
		return out, nil
	}
	header := make([]string, len(rows[0]))
	for i, h := range rows[0] {
		header[i] = fmt.Sprint(h)
	}
	for _, r := range rows[1:] {
		obj := make(map[string]any, len(header))
		for i, h := range header {
			obj[h] = ""
			if i < len(r) {
				obj[h] = r[i]
			}
		}
		out = append(out, obj)
	}
	return out, nil
}

func (in sheetsBlocks) sheetsWrite(ctx context.Context, b *client.GoogleSheetsWriteBlock, sc *scope) (any, error) {
	api, err := in.sheets(ctx, sc, b.SpreadsheetURL, b.CredentialID)
	if err != nil {
		return nil, err
	}
	sheet, rng, text := b.SheetName, b.Range, b.Values
	if err := sc.renderAll(&sheet, &rng, &text); err != nil {
		return nil, err
	}
	var values any
	if err := json.Unmarshal([]byte(text), &values); err != nil {
		return nil, fmt.Errorf("values must render to JSON (a list of rows, each a list of cells or an object): %v", err)
	}
	var mapping map[string]string
	if len(b.ColumnMapping) > 0 && string(b.ColumnMapping) != "null" {
		if err := json.Unmarshal(b.ColumnMapping, &mapping); err != nil {
			return nil, fmt.Errorf("column_mapping must map the values' keys to the sheet's column headers: %v", err)
		}
	}
	if b.CreateSheetIfMissing && strings.TrimSpace(sheet) != "" {
		if err := api.ensureSheet(ctx, strings.TrimSpace(sheet)); err != nil {
			return nil, err
		}
	}
	rows, err := api.rowsOf(ctx, values, mapping, sheet)
	if err != nil {
		return nil, err
	}
	target := a1Range(sheet, rng)
	var upd struct {
		UpdatedRange string `json:"updatedRange"`
		UpdatedRows  int    `json:"updatedRows"`
		UpdatedCells int    `json:"updatedCells"`
	}
	q := url.Values{"valueInputOption": {"USER_ENTERED"}}
	body := map[string]any{"range": target, "majorDimension": "ROWS", "values": rows}
	if b.WriteMode == "update" {
		err = api.call(ctx, http.MethodPut, "/values/"+url.PathEscape(target), q, body, &upd)
	} else {
		q.Set("insertDataOption", "INSERT_ROWS")
		var app struct {
			Updates *struct {
				UpdatedRange string `json:"updatedRange"`
				UpdatedRows  int    `json:"updatedRows"`
				UpdatedCells int    `json:"updatedCells"`
			} `json:"updates"`
		}
		err = api.call(ctx, http.MethodPost, "/values/"+url.PathEscape(target)+":append", q, body, &app)
		if app.Updates != nil {
			upd.UpdatedRange, upd.UpdatedRows, upd.UpdatedCells = app.Updates.UpdatedRange, app.Updates.UpdatedRows, app.Updates.UpdatedCells
		}
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"spreadsheet_id": api.id, "updated_range": upd.UpdatedRange,
		"updated_rows": upd.UpdatedRows, "updated_cells": upd.UpdatedCells}, nil
}

// rowsOf turns the rendered values into rows of cells: a list of lists as
// it is; objects placed under the sheet's column headers (its first row),
// their keys renamed by mapping first; a single row or object as one row.
// Objects written to an empty sheet write the header row first: the first
// object's keys, sorted.
func (s *sheetsAPI) rowsOf(ctx context.Context, values any, mapping map[string]string, sheet string) ([][]any, error) {
	var items []any
	switch v := values.(type) {
	case []any:
		items = v
		if len(v) > 0 && !isRow(v[0]) {
			items = []any{v} // one row of cells
		}
	case map[string]any:
		items = []any{v}
	default:
		return nil, errors.New("values must render to a list of rows (lists of cells or objects), not a single value")
	}
	var header []string
	var rows [][]any
	for i, it := range items {
		switch x := it.(type) {
		case []any:
			rows = append(rows, x)
		case map[string]any:
			if header == nil {
				first, err := s.values(ctx, a1Range(sheet, "1:1"))
				if err != nil {
					return nil, err
				}
				if len(first) > 0 {
					for _, h := range first[0] {
						header = append(header, fmt.Sprint(h))
					}
				} else {
					header = sortedKeys(x, mapping)
					row := make([]any, len(header))
					for j, h := range header {
						row[j] = h
					}
					rows = append(rows, row)
				}
			}
			row := make([]any, len(header))
			for j := range row {
				row[j] = ""
			}
			for k, v := range x {
				name := k
				if m, ok := mapping[k]; ok {
					name = m
				}
				j := slices.Index(header, name)
				if j < 0 {
					return nil, fmt.Errorf("values[%d]: the key %q names no column of the sheet (its headers: %s)", i, name, strings.Join(header, ", "))
				}
				row[j] = v
			}
			rows = append(rows, row)
		default:
			return nil, fmt.Errorf("values[%d] is neither a list of cells nor an object", i)
		}
	}
	return rows, nil
}

func isRow(v any) bool {
	switch v.(type) {
	case []any, map[string]any:
		return true
	}
	return false
}

// sortedKeys are the column names of an object: its keys, renamed by
// mapping, in sorted order.
func sortedKeys(obj map[string]any, mapping map[string]string) []string {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		if m, ok := mapping[k]; ok {
			k = m
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ensureSheet adds the sheet to the spreadsheet when it has none of that
// name.
func (s *sheetsAPI) ensureSheet(ctx context.Context, name string) error {
	var meta struct {
		Sheets []struct {
			Properties struct {
				Title string `json:"title"`
			} `json:"properties"`
		} `json:"sheets"`
	}
	if err := s.call(ctx, http.MethodGet, "", url.Values{"fields": {"sheets.properties.title"}}, nil, &meta); err != nil {
		return err
	}
	for _, sh := range meta.Sheets {
		if sh.Properties.Title == name {
			return nil
		}
	}
	add := map[string]any{"requests": []any{map[string]any{"addSheet": map[string]any{"properties": map[string]any{"title": name}}}}}
	return s.call(ctx, http.MethodPost, ":batchUpdate", nil, add, nil)
}
