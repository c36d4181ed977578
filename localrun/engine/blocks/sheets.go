package blocks

// Google Sheets blocks: google_sheets_read and google_sheets_write, through
// the Sheets API (v4) signed in as a Google service account. The hosted
// service signs in with its own Google application on the user's behalf; a
// local daemon has none, so the block's credential_id names a secret
// credential that holds a service account's JSON key, and the spreadsheet
// is shared with that account's email address.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/blocks/sheets"
	"github.com/abctl/abctl/localrun/engine/secrets"
)

// DefaultSheetsEndpoint is the Sheets API; Env.SheetsEndpoint replaces it
// (tests point it at a server of their own).
const DefaultSheetsEndpoint = sheets.DefaultEndpoint

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
		if _, err := sheets.SpreadsheetID(url); err != nil {
			return fmt.Errorf("block %q (%s): %w", label, typ, err)
		}
	}
	if strings.TrimSpace(cred) == "" {
		return fmt.Errorf("block %q (%s) has no credential_id: this daemon signs in to Google as a service account, "+
			"whose JSON key a secret credential holds (the spreadsheet shared with the account's email); see docs/blocks.md", label, typ)
	}
	return nil
}

// spreadsheet signs in with the service account the credential names and
// returns the API of the spreadsheet.
func (in sheetsBlocks) spreadsheet(ctx context.Context, sc *scope, spreadsheetURL, credentialID string) (*sheets.Spreadsheet, error) {
	rawURL, err := sc.render(spreadsheetURL)
	if err != nil {
		return nil, err
	}
	id, err := sheets.SpreadsheetID(rawURL)
	if err != nil {
		return nil, err
	}
	ref, key, cred, err := in.blockCredential(credentialID)
	if err != nil {
		return nil, err
	}
	if _, ok := cred["secret_value"]; !ok {
		return nil, fmt.Errorf("credential_id %q is not a secret credential (its secret value must be a service account's JSON key)", ref)
	}
	keyJSON, _, err := in.secrets.Reveal(ctx, secrets.Placeholder(key, "secret_value"))
	if err != nil {
		return nil, err
	}
	sa, ok := sheets.ParseKey(keyJSON)
	if !ok {
		return nil, fmt.Errorf("the secret of credential %q is not a Google service account's JSON key (an object with type \"service_account\", client_email and private_key)", ref)
	}
	// The key's token_uri is the organization's to give: the token is
	// fetched through the run's guard. The Sheets API is the operator's
	// (Env.SheetsEndpoint, else Google's), reached as the engine's client
	// reaches it.
	conn := sheets.Conn{HTTP: in.http, Endpoint: in.endpoint}
	if in.guard != nil {
		guard := in.guard
		conn.CheckTokenURL = func(ctx context.Context, rawURL string) error { return guard.CheckURL(ctx, rawURL) }
		conn.Tokens = guard.HTTPClient(0)
	}
	return sheets.Open(ctx, sa, id, conn)
}

func (in sheetsBlocks) sheetsRead(ctx context.Context, b *client.GoogleSheetsReadBlock, sc *scope) (any, error) {
	api, err := in.spreadsheet(ctx, sc, b.SpreadsheetURL, b.CredentialID)
	if err != nil {
		return nil, err
	}
	sheet, rng := b.SheetName, b.Range
	if err := sc.renderAll(&sheet, &rng); err != nil {
		return nil, err
	}
	rows, err := api.Read(ctx, sheets.A1Range(sheet, rng), b.HasHeaderRow == nil || *b.HasHeaderRow)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

func (in sheetsBlocks) sheetsWrite(ctx context.Context, b *client.GoogleSheetsWriteBlock, sc *scope) (any, error) {
	api, err := in.spreadsheet(ctx, sc, b.SpreadsheetURL, b.CredentialID)
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
		if err := api.EnsureSheet(ctx, strings.TrimSpace(sheet)); err != nil {
			return nil, err
		}
	}
	rows, err := api.Rows(ctx, values, mapping, sheet)
	if err != nil {
		return nil, err
	}
	target := sheets.A1Range(sheet, rng)
	upd, err := api.Write(ctx, target, rows, b.WriteMode == "update")
	if err != nil {
		return nil, err
	}
	return map[string]any{"spreadsheet_id": api.ID(), "updated_range": upd.Range,
		"updated_rows": upd.Rows, "updated_cells": upd.Cells}, nil
}
