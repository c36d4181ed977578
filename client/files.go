package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
)

// FilesService uploads files for runs to use and reads the content of
// artifacts. Get it from Client.Files.
type FilesService service

// UploadFileResponse is the answer of POST /v1/upload_file.
type UploadFileResponse struct {
	// S3URI names the stored file. The hosted service answers an s3://
	// URI; the abctl daemon answers abctl://uploads/<artifact id>/<name>,
	// a stable name that nothing fetches.
	S3URI string `json:"s3_uri"`
	// PresignedURL fetches the file without an API key until it expires:
	// give it to runs wherever a file URL goes (file parameters,
	// upload_file actions, file_url_parser blocks). The abctl daemon's
	// stay valid for seven days.
	PresignedURL string `json:"presigned_url"`
}

// Upload sends the content of r as a file named name (POST
// /v1/upload_file, multipart/form-data) and returns its URLs. The whole
// file is read into memory first, so that a retried request sends it again.
// The abctl daemon refuses a file over its --max-upload-size with 413.
func (s *FilesService) Upload(ctx context.Context, name string, r io.Reader, opts ...Option) (*UploadFileResponse, error) {
	if strings.TrimSpace(name) == "" {
		return nil, errors.New("client: Files.Upload: the file name is required")
	}
	if r == nil {
		return nil, errors.New("client: Files.Upload: the file's reader is nil")
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, name))
	h.Set("Content-Type", "application/octet-stream")
	part, err := mw.CreatePart(h)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(part, r); err != nil {
		return nil, fmt.Errorf("client: Files.Upload: reading %s: %w", name, err)
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	out := new(UploadFileResponse)
	_, err = s.client.do(ctx, request{method: "POST", path: "/v1/upload_file", rawBody: buf.Bytes(), contentType: mw.FormDataContentType()}, out, opts)
	return nil2(out, err)
}

// ByteRange is a range of bytes to read: from Start to End inclusive, or
// to the end of the content when End is negative. A negative Start asks
// for the last -Start bytes (End is then ignored).
type ByteRange struct {
	Start, End int64
}

// header is the value of the Range header that asks for the range.
func (br ByteRange) header() string {
	switch {
	case br.Start < 0:
		return "bytes=" + strconv.FormatInt(br.Start, 10)
	case br.End < 0:
		return "bytes=" + strconv.FormatInt(br.Start, 10) + "-"
	}
	return "bytes=" + strconv.FormatInt(br.Start, 10) + "-" + strconv.FormatInt(br.End, 10)
}

// ArtifactContent is the content of an artifact being read. Close Body
// when done.
type ArtifactContent struct {
	Body io.ReadCloser
	// StatusCode is 200 for the whole content, 206 for a range.
	StatusCode  int
	ContentType string
	// ContentLength is the number of bytes Body gives; -1 when unknown.
	ContentLength int64
	// ContentRange is the Content-Range of a partial answer, such as
	// "bytes 0-99/1234"; "" for the whole content.
	ContentRange string
}

// Content reads the content of an artifact by its id (GET
// /v1/artifacts/{artifact_id}/content): a file of a run (its artifact_id in
// Runs.Artifacts) or an uploaded file. With a range, only those bytes are
// sent (206); a range that starts past the end is an *Error with
// StatusCode 416. The body is streamed, not read into memory, and the
// request is sent once (no retries).
func (s *FilesService) Content(ctx context.Context, artifactID string, rng *ByteRange, opts ...Option) (*ArtifactContent, error) {
	if err := requireID("artifact id", artifactID); err != nil {
		return nil, err
	}
	cfg, err := s.client.callConfig(opts)
	if err != nil {
		return nil, err
	}
	req := request{method: "GET", path: pathf("/v1/artifacts/%s/content", artifactID), idempotent: true}
	if rng != nil {
		req.header = map[string]string{"Range": rng.header()}
	}
	hreq, err := http.NewRequestWithContext(ctx, req.method, cfg.baseURL.String()+req.path, nil)
	if err != nil {
		return nil, fmt.Errorf("client: build request GET %s: %w", req.path, err)
	}
	cfg.setHeaders(hreq, req, false)
	hreq.Header.Set("Accept", "*/*")
	resp, err := cfg.httpClient.Do(hreq)
	if cfg.responseInto != nil && resp != nil {
		*cfg.responseInto = resp
	}
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPartialContent {
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, newError(resp, body, cfg.now())
	}
	return &ArtifactContent{
		Body:          resp.Body,
		StatusCode:    resp.StatusCode,
		ContentType:   resp.Header.Get("Content-Type"),
		ContentLength: resp.ContentLength,
		ContentRange:  resp.Header.Get("Content-Range"),
	}, nil
}

// DownloadFilesRequest starts a run whose goal is to download files (POST
// /v1/run/tasks/download_files): an agent run of one file_download block,
// which completes once a file was downloaded. The files are in the run's
// downloaded_files and its artifacts.
type DownloadFilesRequest struct {
	// NavigationGoal says how to reach and download the files; required.
	NavigationGoal string `json:"navigation_goal"`
	// URL is the page the run starts on.
	URL string `json:"url,omitempty"`
	// DownloadSuffix names the downloaded file (its whole name).
	DownloadSuffix string `json:"download_suffix,omitempty"`
	// DownloadTimeout is how long, in seconds, a download may take.
	DownloadTimeout *float64 `json:"download_timeout,omitempty"`
	// MaxStepsPerRun caps the model's steps.
	MaxStepsPerRun              *int              `json:"max_steps_per_run,omitempty"`
	WebhookURL                  string            `json:"webhook_url,omitempty"`
	ProxyLocation               *ProxyLocation    `json:"proxy_location,omitempty"`
	TOTPIdentifier              string            `json:"totp_identifier,omitempty"`
	TOTPURL                     string            `json:"totp_url,omitempty"`
	BrowserSessionID            string            `json:"browser_session_id,omitempty"`
	BrowserProfileID            string            `json:"browser_profile_id,omitempty"`
	BrowserAddress              string            `json:"browser_address,omitempty"`
	ExtraHTTPHeaders            map[string]string `json:"extra_http_headers,omitempty"`
	MaxScreenshotScrollingTimes *int              `json:"max_screenshot_scrolling_times,omitempty"`
}

// DownloadFiles starts a run that downloads files (POST
// /v1/run/tasks/download_files); wait for it with Wait.
func (s *RunsService) DownloadFiles(ctx context.Context, req *DownloadFilesRequest, opts ...Option) (*Run, error) {
	if req == nil || strings.TrimSpace(req.NavigationGoal) == "" {
		return nil, errors.New("client: Runs.DownloadFiles: the request's NavigationGoal is required")
	}
	out := new(Run)
	_, err := s.client.do(ctx, request{method: "POST", path: "/v1/run/tasks/download_files", body: req}, out, opts)
	return nil2(out, err)
}
