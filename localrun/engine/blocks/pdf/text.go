package pdf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// pdftotextTimeout bounds one run of pdftotext.
const pdftotextTimeout = 2 * time.Minute

// ErrNoPdftotext is why a PDF's text cannot be read on this machine.
var ErrNoPdftotext = errors.New("reading a PDF's text needs the program pdftotext (Debian package poppler-utils), which is not installed on the daemon's machine")

// HavePdftotext says why a PDF's text cannot be read on this machine; nil
// when it can.
func HavePdftotext() error {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		return ErrNoPdftotext
	}
	return nil
}

// PagesText returns the text of each page of the PDF at path, read by
// pdftotext; a text larger than maxBytes is an error.
func PagesText(ctx context.Context, path string, maxBytes int) ([]string, error) {
	prog, err := exec.LookPath("pdftotext")
	if err != nil {
		return nil, ErrNoPdftotext
	}
	tctx, cancel := context.WithTimeout(ctx, pdftotextTimeout)
	defer cancel()
	stdout := &limitedBuffer{limit: maxBytes}
	stderr := &limitedBuffer{limit: 64 << 10}
	cmd := exec.CommandContext(tctx, prog, "-enc", "UTF-8", path, "-")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case tctx.Err() != nil:
		return nil, fmt.Errorf("pdftotext did not finish reading the PDF within %s", pdftotextTimeout)
	case stdout.over:
		return nil, fmt.Errorf("the PDF's text is larger than %d bytes", maxBytes)
	case err != nil:
		return nil, pdftotextError(err, stderr.String())
	}
	pages := strings.Split(stdout.String(), "\f")
	if n := len(pages); n > 1 && strings.TrimSpace(pages[n-1]) == "" {
		pages = pages[:n-1] // after the last page's break
	}
	for i, p := range pages {
		pages[i] = strings.TrimSpace(p)
	}
	return pages, nil
}

// pdftotextError explains a failed run of pdftotext by its exit status and
// its last message.
func pdftotextError(err error, stderr string) error {
	var last string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			last = l
		}
	}
	var exit *exec.ExitError
	code := -1
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	}
	switch {
	case strings.Contains(stderr, "Incorrect password"):
		return errors.New("the PDF is protected by a password; its text cannot be read")
	case code == 3:
		return errors.New("the PDF's permissions forbid copying its text")
	case last != "":
		return fmt.Errorf("the file is not a readable PDF (pdftotext: %s)", last)
	}
	return fmt.Errorf("the file is not a readable PDF (pdftotext: %v)", err)
}

// limitedBuffer is a buffer that refuses to grow past limit bytes; over
// says it was asked to.
type limitedBuffer struct {
	bytes.Buffer
	limit int
	over  bool
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if l.Len()+len(p) > l.limit {
		l.over = true
		return 0, errors.New("output too large")
	}
	return l.Buffer.Write(p)
}

// parsePDFText is the output of a PDF parsed as a file: its text, pages
