package daemon_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/daemon"
)

// apiBodyLimit is the daemon's limit of request bodies other than
// uploads (daemon/api's maxBodyBytes), as the 413's detail names it.
const apiBodyLimit = 8 << 20

// limitClient sends its requests with "Expect: 100-continue", so that a
// body the daemon refuses by its Content-Length is not sent at all, and
// the answer is read whatever the daemon does with the connection after.
func limitClient(t *testing.T) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ExpectContinueTimeout = time.Minute
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// postBody posts body to the daemon at addr and returns the status and
// the answer's detail. chunked hides the body's length, so that the
// handler reads it and finds it too large, instead of the middleware
// refusing it by its Content-Length.
func postBody(t *testing.T, hc *http.Client, addr, path, contentType string, body []byte, chunked bool) (int, string) {
	t.Helper()
	var r io.Reader = bytes.NewReader(body)
	if chunked {
		r = io.MultiReader(r) // not a *bytes.Reader: the length is unknown
	}
	req, err := http.NewRequest("POST", "http://"+addr+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Api-Key", filesTestKey)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Expect", "100-continue")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	var answer struct {
		Detail json.RawMessage `json:"detail"`
	}
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &answer); err != nil {
		t.Errorf("POST %s: the answer is not JSON: %.200s", path, b)
	}
	return resp.StatusCode, string(answer.Detail)
}

// paddedJSON is a JSON object of exactly n bytes.
func paddedJSON(n int) []byte {
	const open, end = `{"pad":"`, `"}`
	return []byte(open + strings.Repeat("a", n-len(open)-len(end)) + end)
}

// TestBodyOverTheLimitIs413: a body one byte over a route's limit is
// answered 413 with a detail that names the limit, whether its
// Content-Length says so (refused before it is read) or it is sent
// without one (refused as it is read), on every route that reads a body:
// scripts, agents (JSON and YAML), runs. An upload one byte over the
// upload limit is 413 too. (A security review found a 10 MB script
// answered 422.)
func TestBodyOverTheLimitIs413(t *testing.T) {
	e := newFilesEnv(t, daemon.Config{MaxUploadSize: 1000})
	hc := limitClient(t)
	wantDetail := fmt.Sprintf("limit of %d bytes", apiBodyLimit)
	for _, route := range []struct{ path, contentType string }{
		{"/v1/scripts", "application/json"},
		{"/v1/agents", "application/json"},
		{"/v1/agents", "application/x-yaml"},
		{"/v1/run/tasks", "application/json"},
		{"/v1/run/agents", "application/json"},
	} {
		for _, chunked := range []bool{false, true} {
			name := fmt.Sprintf("%s %s chunked=%v", route.path, route.contentType, chunked)
			t.Run(name, func(t *testing.T) {
				code, detail := postBody(t, hc, e.addr, route.path, route.contentType, paddedJSON(apiBodyLimit+1), chunked)
				if code != http.StatusRequestEntityTooLarge || !strings.Contains(detail, wantDetail) {
					t.Errorf("a body of %d bytes: %d %.300s", apiBodyLimit+1, code, detail)
				}
			})
		}
	}
	// A body of exactly the limit is read: it is not valid, but not too large.
	if code, detail := postBody(t, hc, e.addr, "/v1/run/tasks", "application/json", paddedJSON(apiBodyLimit), true); code == http.StatusRequestEntityTooLarge || code/100 != 4 {
		t.Errorf("a body of exactly the limit: %d %.300s", code, detail)
	}

	// An upload one byte over the daemon's upload limit.
	for _, size := range []int{1000, 1001} {
		var mp bytes.Buffer
		mw := multipart.NewWriter(&mp)
		fw, err := mw.CreateFormFile("file", "data.bin")
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(bytes.Repeat([]byte{'x'}, size))
		mw.Close()
		code, detail := postBody(t, hc, e.addr, "/v1/upload_file", mw.FormDataContentType(), mp.Bytes(), false)
		switch {
		case size > 1000 && (code != http.StatusRequestEntityTooLarge || !strings.Contains(detail, "limit of 1000 bytes")):
			t.Errorf("an upload of %d bytes: %d %.300s", size, code, detail)
		case size <= 1000 && code != http.StatusOK:
			t.Errorf("an upload of %d bytes: %d %.300s", size, code, detail)
		}
	}
}
