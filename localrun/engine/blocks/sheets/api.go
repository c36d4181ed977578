package sheets

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/oauth2"

	"github.com/abctl/abctl/internal/egress"
)

// call sends one request and decodes the answer into out.
func (s *Spreadsheet) call(ctx context.Context, method, path string, query url.Values, body, out any) error {
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
func (s *Spreadsheet) values(ctx context.Context, rng string) ([][]any, error) {
	var got struct {
		Values [][]any `json:"values"`
	}
	err := s.call(ctx, http.MethodGet, "/values/"+url.PathEscape(rng), url.Values{"majorDimension": {"ROWS"}}, nil, &got)
	return got.Values, err
}

// Read returns the cells of the range rng (A1 notation): with header, an
// object per row after the first, keyed by the first row's cells (a
// missing cell is ""); else a list of cells per row.
func (s *Spreadsheet) Read(ctx context.Context, rng string, header bool) ([]any, error) {
	rows, err := s.values(ctx, rng)
	if err != nil {
		return nil, err
	}
	if !header {
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
	names := make([]string, len(rows[0]))
	for i, h := range rows[0] {
		names[i] = fmt.Sprint(h)
	}
	for _, r := range rows[1:] {
		obj := make(map[string]any, len(names))
		for i, h := range names {
			obj[h] = ""
			if i < len(r) {
				obj[h] = r[i]
			}
		}
		out = append(out, obj)
	}
	return out, nil
}

// Updated is what a write changed.
type Updated struct {
	Range string `json:"updatedRange"`
	Rows  int    `json:"updatedRows"`
	Cells int    `json:"updatedCells"`
}

// Write writes rows at target (A1 notation): over its cells with update,
// else appended after the table there. The cells are entered as a user
// types them.
func (s *Spreadsheet) Write(ctx context.Context, target string, rows [][]any, update bool) (Updated, error) {
	var upd Updated
	q := url.Values{"valueInputOption": {"USER_ENTERED"}}
	body := map[string]any{"range": target, "majorDimension": "ROWS", "values": rows}
	if update {
		err := s.call(ctx, http.MethodPut, "/values/"+url.PathEscape(target), q, body, &upd)
		return upd, err
	}
	q.Set("insertDataOption", "INSERT_ROWS")
	var app struct {
		Updates *Updated `json:"updates"`
	}
	err := s.call(ctx, http.MethodPost, "/values/"+url.PathEscape(target)+":append", q, body, &app)
	if app.Updates != nil {
		upd = *app.Updates
	}
	return upd, err
}

// Rows turns the rendered values into rows of cells: a list of lists as
// it is; objects placed under the sheet's column headers (its first row),
// their keys renamed by mapping first; a single row or object as one row.
// Objects written to an empty sheet write the header row first: the first
// object's keys, sorted.
func (s *Spreadsheet) Rows(ctx context.Context, values any, mapping map[string]string, sheet string) ([][]any, error) {
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
				first, err := s.values(ctx, A1Range(sheet, "1:1"))
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

// EnsureSheet adds the sheet to the spreadsheet when it has none of that
// name.
func (s *Spreadsheet) EnsureSheet(ctx context.Context, name string) error {
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
