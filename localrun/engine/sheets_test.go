package engine_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
)

// fakeGoogle is Google's token endpoint and the part of the Sheets API
// the blocks use, on loopback: it signs in a service account only with an
// assertion its key signed, and keeps the cells of one spreadsheet.
type fakeGoogle struct {
	url   string
	email string
	pub   *rsa.PublicKey

	mu     sync.Mutex
	sheets map[string][][]any // by title, in the spreadsheet fakeSheetID
	tokens int
}

const (
	fakeSheetID = "1AbCdEfGhIjK_sheet"
	fakeToken   = "ya29.fake-access-token"
)

func startGoogle(t *testing.T) (*fakeGoogle, string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	g := &fakeGoogle{email: "robot@abctl-test.iam.gserviceaccount.com", pub: &key.PublicKey, sheets: map[string][][]any{
		"Orders": {{"id", "product", "total"}, {"1", "Trail Running Shoes", "179.98"}, {"2", "Waterproof Jacket", "149.00"}},
	}}
	srv := httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(srv.Close)
	g.url = srv.URL
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	keyJSON, _ := json.Marshal(map[string]string{
		"type": "service_account", "client_email": g.email, "private_key_id": "k1",
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"token_uri":   srv.URL + "/token",
	})
	return g, string(keyJSON)
}

func (g *fakeGoogle) serve(w http.ResponseWriter, r *http.Request) {
	fail := func(code int, status, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "status": status, "message": msg}})
	}
	if r.URL.Path == "/token" {
		if err := g.checkAssertion(r); err != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant", "error_description": err.Error()})
			return
		}
		g.mu.Lock()
		g.tokens++
		g.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": fakeToken, "token_type": "Bearer", "expires_in": 3600})
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+fakeToken {
		fail(http.StatusUnauthorized, "UNAUTHENTICATED", "no valid access token")
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/v4/spreadsheets/"+fakeSheetID)
	if !ok {
		fail(http.StatusNotFound, "NOT_FOUND", "Requested entity was not found.")
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case rest == "" && r.Method == http.MethodGet:
		var sheets []any
		for title := range g.sheets {
			sheets = append(sheets, map[string]any{"properties": map[string]any{"title": title}})
		}
		json.NewEncoder(w).Encode(map[string]any{"sheets": sheets})
	case rest == ":batchUpdate" && r.Method == http.MethodPost:
		var req struct {
			Requests []struct {
				AddSheet struct {
					Properties struct{ Title string } `json:"properties"`
				} `json:"addSheet"`
			} `json:"requests"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		for _, q := range req.Requests {
			g.sheets[q.AddSheet.Properties.Title] = [][]any{}
		}
		w.Write([]byte(`{}`))
	case strings.HasPrefix(rest, "/values/"):
		rng := strings.TrimPrefix(rest, "/values/")
		appendRows := strings.HasSuffix(rng, ":append")
		rng = strings.TrimSuffix(rng, ":append")
		title, cells, _ := strings.Cut(rng, "!")
		title = strings.ReplaceAll(strings.Trim(title, "'"), "''", "'")
		rows, exists := g.sheets[title]
		if !exists {
			fail(http.StatusBadRequest, "INVALID_ARGUMENT", "Unable to parse range: "+rng)
			return
		}
		switch r.Method {
		case http.MethodGet:
			if cells == "1:1" && len(rows) > 1 {
				rows = rows[:1]
			}
			json.NewEncoder(w).Encode(map[string]any{"range": rng, "majorDimension": "ROWS", "values": rows})
		case http.MethodPost, http.MethodPut:
			if r.URL.Query().Get("valueInputOption") != "USER_ENTERED" {
				fail(http.StatusBadRequest, "INVALID_ARGUMENT", "valueInputOption is required")
				return
			}
			var body struct {
				Values [][]any `json:"values"`
			}
			json.NewDecoder(r.Body).Decode(&body)
			if appendRows {
				g.sheets[title] = append(rows, body.Values...)
			} else {
				g.sheets[title] = body.Values
			}
			cellCount := 0
			for _, row := range body.Values {
				cellCount += len(row)
			}
			upd := map[string]any{"updatedRange": rng, "updatedRows": len(body.Values), "updatedCells": cellCount}
			if appendRows {
				json.NewEncoder(w).Encode(map[string]any{"updates": upd})
			} else {
				json.NewEncoder(w).Encode(upd)
			}
		}
	default:
		fail(http.StatusNotFound, "NOT_FOUND", "no such method")
	}
}

// checkAssertion checks a JWT bearer grant: signed with the service
// account's key (RS256), issued by its email, for the token endpoint and
// the spreadsheets scope.
func (g *fakeGoogle) checkAssertion(r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return err
	}
	if r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		return fmt.Errorf("grant_type %q", r.PostForm.Get("grant_type"))
	}
	parts := strings.Split(r.PostForm.Get("assertion"), ".")
	if len(parts) != 3 {
		return fmt.Errorf("the assertion is not a JWT")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(g.pub, crypto.SHA256, sum[:], sig); err != nil {
		return fmt.Errorf("the assertion's signature: %v", err)
	}
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct {
		Iss, Scope, Aud string
	}
	json.Unmarshal(payload, &claims)
	if claims.Iss != g.email || claims.Scope != "https://www.googleapis.com/auth/spreadsheets" || claims.Aud != g.url+"/token" {
		return fmt.Errorf("claims %+v", claims)
	}
	return nil
}

func (g *fakeGoogle) sheet(title string) [][]any {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sheets[title]
}

// TestGoogleSheets: the Google Sheets blocks sign in as a service account
// whose JSON key a secret credential holds, read a sheet into one object a
// row (keyed by the header row), append rows given as objects under the
// sheet's headers (renamed by column_mapping), write to a sheet they
// create, and fail with the API's reason, and a hint to share the
// spreadsheet, on one the account cannot reach. Nothing of the run holds
// the key.
func TestGoogleSheets(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	g, keyJSON := startGoogle(t)
	e := newEngine(t, engine.Config{SheetsEndpoint: g.url, Vault: vault{
		"cred_google": &client.SecretCredential{SecretValue: keyJSON},
		"cred_not":    &client.SecretCredential{SecretValue: `{"type": "authorized_user"}`},
	}})
	sheetURL := "https://docs.google.com/spreadsheets/d/" + fakeSheetID + "/edit#gid=0"
	def := client.WorkflowDefinition{
		Parameters: []client.Parameter{{Key: "google", ParameterType: client.ParameterTypeCredential, CredentialID: "cred_google"}},
		Blocks: client.Blocks{
			gotoBlock("open", site.URL(testsite.PageProducts)), // files for the search below
			&client.GoogleSheetsReadBlock{BlockBase: base("orders"), SpreadsheetURL: sheetURL, SheetName: "Orders", CredentialID: "google"},
			&client.GoogleSheetsWriteBlock{BlockBase: base("add"), SpreadsheetURL: sheetURL, SheetName: "Orders", CredentialID: "{{ google }}",
				Values:        `[{"id": "3", "item": "Merino Wool Socks", "total": "{{ orders_output[0].total }}"}]`,
				ColumnMapping: json.RawMessage(`{"item": "product"}`)},
			&client.GoogleSheetsWriteBlock{BlockBase: base("summary"), SpreadsheetURL: fakeSheetID, SheetName: "Summary", CredentialID: "cred_google",
				WriteMode: "update", CreateSheetIfMissing: true, Values: `[["last order", "{{ orders_output[1].id }}"]]`},
		},
	}
	j := job(t, def, nil)
	res := e.Execute(t.Context(), j, &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("%s: %s", res.Status, res.FailureReason)
	}
	out := outputOf(t, res)
	rows, _ := out["orders_output"].([]any)
	if len(rows) != 2 || rows[1].(map[string]any)["product"] != "Waterproof Jacket" || rows[0].(map[string]any)["total"] != "179.98" {
		t.Fatalf("orders_output %v", out["orders_output"])
	}
	if add, _ := out["add_output"].(map[string]any); add["updated_rows"] != 1.0 || add["spreadsheet_id"] != fakeSheetID {
		t.Errorf("add_output %v", add)
	}
	orders := g.sheet("Orders")
	if len(orders) != 4 || fmt.Sprint(orders[3]) != "[3 Merino Wool Socks 179.98]" {
		t.Errorf("the Orders sheet holds %v", orders)
	}
	if summary := g.sheet("Summary"); fmt.Sprint(summary) != "[[last order 2]]" {
		t.Errorf("the Summary sheet holds %v", summary)
	}
	noSecretIn(t, j.Dir, "PRIVATE KEY")
	if strings.Contains(string(res.Output), "PRIVATE KEY") {
		t.Error("the output holds the key")
	}

	// A spreadsheet the account cannot reach, a key that is not a service
	// account's, and a values text that is not JSON.
	for _, tc := range []struct {
		block client.Block
		want  []string
	}{
		{&client.GoogleSheetsReadBlock{BlockBase: base("other"), SpreadsheetURL: "someone-elses-sheet", CredentialID: "cred_google"},
			[]string{`Block "other" (google_sheets_read) failed`, "404 NOT_FOUND", "shared with " + g.email}},
		{&client.GoogleSheetsReadBlock{BlockBase: base("wrong_key"), SpreadsheetURL: fakeSheetID, CredentialID: "cred_not"},
			[]string{`is not a Google service account's JSON key`}},
		{&client.GoogleSheetsWriteBlock{BlockBase: base("bad_values"), SpreadsheetURL: fakeSheetID, SheetName: "Orders", CredentialID: "cred_google", Values: "id, product"},
			[]string{"values must render to JSON"}},
		{&client.GoogleSheetsWriteBlock{BlockBase: base("unknown_column"), SpreadsheetURL: fakeSheetID, SheetName: "Orders", CredentialID: "cred_google", Values: `{"colour": "red"}`},
			[]string{`the key "colour" names no column of the sheet (its headers: id, product, total)`}},
	} {
		res := e.Execute(t.Context(), job(t, client.WorkflowDefinition{Blocks: client.Blocks{tc.block}}, nil), &progress{})
		if res.Status != client.RunStatusFailed {
			t.Errorf("%s: %s", tc.block.Base().Label, res.Status)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(res.FailureReason, w) {
				t.Errorf("%s: the reason %q does not say %q", tc.block.Base().Label, res.FailureReason, w)
			}
		}
		if strings.Contains(res.FailureReason, "PRIVATE KEY") {
			t.Errorf("%s: the reason shows the key", tc.block.Base().Label)
		}
	}
}
