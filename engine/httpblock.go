package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/tmpl"
)

// Limits of http_request.
const (
	defaultHTTPTimeout = 30 * time.Second
	maxHTTPTimeout     = 10 * time.Minute
	maxHTTPBody        = 10 << 20  // kept in the output
	maxHTTPFile        = 100 << 20 // saved as a file
)

func (r *run) httpRequest(ctx context.Context, b *client.HTTPRequestBlock, sc *scope) (_ any, err error) {
	vars := r.vars(sc)
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
	rawURL, err := render(b.URL)
	if err != nil {
		return nil, err
	}
	rawURL = strings.TrimSpace(rawURL)
	u, err := url.Parse(rawURL)
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
	rec, err := r.startStep(b.Label, actionRecord{Type: "http_request", Text: method + " " + u.Redacted()})
	if err != nil {
		return nil, err
	}
	var answered string
	defer func() { r.endStep(rec, "", answered, err) }()
	timeout := defaultHTTPTimeout
	if b.Timeout > 0 {
		timeout = min(time.Duration(b.Timeout)*time.Second, maxHTTPTimeout)
	}
	hc := *r.e.http
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
		return nil, fmt.Errorf("%s %s: %v", method, u.Redacted(), unwrapURLError(err))
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
			name = responseFileName(resp, u)
		}
		saved, err := r.writeFile(safeName(name, "response"), data)
		if err != nil {
			return out, fmt.Errorf("saving the response: %v", err)
		}
		r.addFile(saved)
		out["downloaded_files"] = []any{r.fileInfo(saved)}
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

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
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

// responseFileName is the name a response suggests for itself.
func responseFileName(resp *http.Response, u *url.URL) string {
	if cd := resp.Header.Get("Content-Disposition"); cd != "" {
		if _, params, err := mime.ParseMediaType(cd); err == nil && params["filename"] != "" {
			return params["filename"]
		}
	}
	if base := path.Base(u.Path); base != "" && base != "/" && base != "." {
		return base
	}
	return "response"
}

// Paper sizes of print_page, in inches.
var paperSizes = map[string][2]float64{
	"":        {8.27, 11.69},
	"A4":      {8.27, 11.69},
	"Letter":  {8.5, 11},
	"Legal":   {8.5, 14},
	"Tabloid": {11, 17},
}

func (r *run) printPage(ctx context.Context, b *client.PrintPageBlock, sc *scope) (_ any, err error) {
	name, err := r.render(b.CustomFilename, sc)
	if err != nil {
		return nil, err
	}
	size, ok := paperSizes[b.Format]
	if !ok {
		return nil, fmt.Errorf("format %q is not one of A4, Letter, Legal, Tabloid", b.Format)
	}
	rec, err := r.startStep(b.Label, actionRecord{Type: "print_page", Text: b.Format})
	if err != nil {
		return nil, err
	}
	var saved string
	defer func() { r.endStep(rec, "", "saved "+saved, err) }()
	if _, err := r.page(ctx); err != nil {
		return nil, err
	}
	tab := r.tab
	if strings.TrimSpace(name) == "" {
		name = r.title(ctx, tab)
	}
	name = strings.TrimSuffix(strings.TrimSpace(name), ".pdf")
	if b.IncludeTimestamp == nil || *b.IncludeTimestamp {
		name += "_" + time.Now().UTC().Format("20060102_150405")
	}
	background := b.PrintBackground == nil || *b.PrintBackground
	pctx, cancel := onTab(tab, ctx, 60*time.Second)
	defer cancel()
	res, err := chromedp.Call(pctx, cdppage.PrintToPDF, cdppage.PrintToPDFParams{
		Landscape:       &b.Landscape,
		PrintBackground: &background,
		PaperWidth:      size[0],
		PaperHeight:     size[1],
	})
	if err != nil {
		return nil, fmt.Errorf("printing the page: %v", err)
	}
	saved, err = r.writeFile(safeName(name+".pdf", "page.pdf"), res.Data)
	if err != nil {
		return nil, fmt.Errorf("saving the PDF: %v", err)
	}
	r.addFile(saved)
	return map[string]any{"downloaded_files": []any{r.fileInfo(saved)}}, nil
}

// title is the title of the tab's document, or "page".
func (r *run) title(ctx context.Context, tab context.Context) string {
	tctx, cancel := onTab(tab, ctx, 3*time.Second)
	defer cancel()
	t, err := chromedp.Run(tctx, chromedp.Title())
	if err != nil || strings.TrimSpace(t) == "" {
		return "page"
	}
	return t
}

// onTab returns a context with tab's chromedp values that ends with ctx or
// after d.
func onTab(tab, ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	c, cancel := context.WithTimeout(tab, d)
	stop := context.AfterFunc(ctx, cancel)
	return c, func() { stop(); cancel() }
}
