package blocks

// The blocks that make a file or a request: http_request and print_page.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/abctl/abctl/agentfile/tmpl"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/localrun/engine/runbrowser"
	"github.com/abctl/abctl/localrun/engine/steplog"
)

// Limits of http_request.
const (
	defaultHTTPTimeout = 30 * time.Second
	maxHTTPTimeout     = 10 * time.Minute
	maxHTTPBody        = 10 << 20  // kept in the output
	maxHTTPFile        = 100 << 20 // saved as a file
)

func (in fileBlocks) httpRequest(ctx context.Context, b *client.HTTPRequestBlock, sc *scope) (_ any, err error) {
	vars := sc.vars()
	render := func(s string) (string, error) {
		out, err := tmpl.Render(s, vars)
		if err != nil {
			return "", &templateError{err}
		}
		return out, nil
	}
	method, err := render(b.Method)
	if err != nil {
		return nil, err
	}
	method = strings.ToUpper(strings.TrimSpace(method))
	if method == "" {
		method = http.MethodGet
	}
	rawURL, err := sc.renderURL(b.URL)
	if err != nil {
		return nil, err
	}
	rawURL = strings.TrimSpace(rawURL)
	u, err := url.Parse(rawURL)
	if err == nil && u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https" {
		// file:, ftp:, gopher:...: refused as every channel refuses them.
		return nil, in.guard.CheckURL(ctx, rawURL)
	}
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the url %q is not an absolute http or https URL", rawURL)
	}
	headers := map[string]string{}
	if len(b.Headers) > 0 && string(b.Headers) != "null" {
		rendered, err := tmpl.RenderJSON(b.Headers, vars)
		if err != nil {
			return nil, &templateError{err}
		}
		var hv map[string]any
		if err := json.Unmarshal(rendered, &hv); err != nil {
			return nil, fmt.Errorf("headers must be an object: %v", err)
		}
		for k, v := range hv {
			if s, ok := v.(string); ok {
				headers[k] = s
			} else if v != nil {
				bs, _ := json.Marshal(v)
				headers[k] = string(bs)
			}
		}
	}
	var body io.Reader
	if len(b.Body) > 0 && string(b.Body) != "null" {
		rendered, err := tmpl.RenderJSON(b.Body, vars)
		if err != nil {
			return nil, &templateError{err}
		}
		body = bytes.NewReader(rendered)
		if !hasHeader(headers, "Content-Type") {
			headers["Content-Type"] = "application/json"
		}
	}
	rec, err := in.steps.Start(b.Label, steplog.Action{Type: "http_request", Text: method + " " + u.Redacted()})
	if err != nil {
		return nil, err
	}
	var answered string
	defer func() { in.steps.End(rec, "", answered, err) }()
	timeout := defaultHTTPTimeout
	if b.Timeout > 0 {
		timeout = min(time.Duration(b.Timeout)*time.Second, maxHTTPTimeout)
	}
	// The run's organization's guard makes the connections (every
	// redirect's too); without a policy, the engine's client.
	hc := *in.http
	if in.guard != nil {
		hc = *in.guard.HTTPClient(timeout)
	}
	hc.Timeout = timeout
	if b.FollowRedirects != nil && !*b.FollowRedirects {
		hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		if egress.IsRefused(err) {
			// It names the URL (without its query), the address and the
			// rule.
			return nil, runbrowser.NetErr(err)
		}
		return nil, fmt.Errorf("%s %s: %v", method, u.Redacted(), runbrowser.NetErr(err))
	}
	defer resp.Body.Close()
	limit := int64(maxHTTPBody)
	if b.SaveResponseAsFile {
		limit = maxHTTPFile
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the response: %v", method, u.Redacted(), err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s %s: the response is larger than %d bytes", method, u.Redacted(), limit)
	}
	answered = "HTTP " + resp.Status
	respHeaders := make(map[string]any, len(resp.Header))
	for k, vs := range resp.Header {
		respHeaders[strings.ToLower(k)] = strings.Join(vs, ", ")
	}
	out := map[string]any{
		"status_code": resp.StatusCode,
		"headers":     respHeaders,
		"body":        responseBody(resp.Header.Get("Content-Type"), data, b.SaveResponseAsFile),
	}
	if b.SaveResponseAsFile {
		name, err := render(b.DownloadFilename)
		if err != nil {
			return out, err
		}
		if strings.TrimSpace(name) == "" {
			name = runbrowser.ResponseFileName(resp, u)
		}
		saved, err := in.files.Save(name, "response", data)
		if err != nil {
			return out, fmt.Errorf("saving the response: %v", err)
		}
		out["downloaded_files"] = []any{in.files.Info(saved)}
		answered += ", saved as " + saved
	}
	if resp.StatusCode >= 400 {
		return out, fmt.Errorf("%s %s answered HTTP %s", method, u.Redacted(), resp.Status)
	}
	return out, nil
}

func hasHeader(h map[string]string, name string) bool {
	for k := range h {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// responseBody is the body as the output shows it: decoded JSON for a JSON
// response, else text.
func responseBody(contentType string, data []byte, saved bool) any {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "application/json" || strings.HasSuffix(mt, "+json") {
		var v any
		if json.Unmarshal(data, &v) == nil {
			return v
		}
	}
	if saved && !strings.HasPrefix(mt, "text/") && mt != "" {
		return nil // a binary file; it is in downloaded_files
	}
	return string(bytes.ToValidUTF8(data, []byte("\uFFFD")))
}

// Paper sizes of print_page, in inches.
var paperSizes = map[string][2]float64{
	"":        {8.27, 11.69},
	"A4":      {8.27, 11.69},
	"Letter":  {8.5, 11},
	"Legal":   {8.5, 14},
	"Tabloid": {11, 17},
}

func (in fileBlocks) printPage(ctx context.Context, b *client.PrintPageBlock, sc *scope) (_ any, err error) {
	name, err := sc.render(b.CustomFilename)
	if err != nil {
		return nil, err
	}
	size, ok := paperSizes[b.Format]
	if !ok {
		return nil, fmt.Errorf("format %q is not one of A4, Letter, Legal, Tabloid", b.Format)
	}
	rec, err := in.steps.Start(b.Label, steplog.Action{Type: "print_page", Text: b.Format})
	if err != nil {
		return nil, err
	}
	var saved string
	defer func() { in.steps.End(rec, "", "saved "+saved, err) }()
	tab, err := in.tabs.ActiveTab(ctx)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(name) == "" {
		name = tab.Title(ctx)
	}
	name = strings.TrimSuffix(strings.TrimSpace(name), ".pdf")
	if b.IncludeTimestamp == nil || *b.IncludeTimestamp {
		name += "_" + time.Now().UTC().Format("20060102_150405")
	}
	background := b.PrintBackground == nil || *b.PrintBackground
	pdf, err := tab.PrintPDF(ctx, runbrowser.PDF{Landscape: b.Landscape, Background: background, Width: size[0], Height: size[1]})
	if err != nil {
		return nil, fmt.Errorf("printing the page: %v", err)
	}
	saved, err = in.files.Save(name+".pdf", "page.pdf", pdf)
	if err != nil {
		return nil, fmt.Errorf("saving the PDF: %v", err)
	}
	return map[string]any{"downloaded_files": []any{in.files.Info(saved)}}, nil
}
