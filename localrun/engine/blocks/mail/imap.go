package mail

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"net"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-message"
	_ "github.com/emersion/go-message/charset" // the charsets of older mail
	"github.com/emersion/go-message/mail"
)

const (
	// MaxMessageBytes bounds the size of one message read whole; a larger
	// one is read without its text and attachments.
	MaxMessageBytes = 25 << 20
	// imapTimeout bounds connecting and each exchange with the server.
	imapTimeout = 30 * time.Second
)

// ErrAuth marks a sign-in the server refused.
var ErrAuth = errors.New("authentication failed")

// IMAPConfig is where email_inbox blocks read mail. The zero value uses the
// providers' servers.
type IMAPConfig struct {
	// Address (host:port) is the server of every email_inbox block,
	// whatever its email_client; "" uses the provider's.
	Address string
	// StartTLS connects to Address in plain text and upgrades the
	// connection with STARTTLS (usually port 143), instead of TLS from the
	// start (usually port 993). Either way the password is sent over TLS
	// only.
	StartTLS bool
	// TLS configures TLS (RootCAs: the authorities to trust); nil uses the
	// system's.
	TLS *tls.Config
}

// Account is a mailbox to sign in to.
type Account struct {
	Address  string // host:port
	StartTLS bool
	TLS      *tls.Config
	Username string
	Password string
	// Dial connects to the server: the run's egress guard for the provider
	// a block names; nil for the operator's server (IMAPConfig.Address,
	// the daemon's flags), which is trusted.
	Dial Dialer
}

// Query says which messages to read.
type Query struct {
	Folder   string
	Sender   string    // a part of From, as the server matches it
	Subject  string    // a part of Subject, as the server matches it
	Since    time.Time // zero: any date
	Max      int
	WithBody bool // the text and the attachments too
}

// Message is one message as read from the server.
type Message struct {
	UID         uint32
	From        []string
	To          []string
	CC          []string
	Subject     string
	Date        time.Time
	MessageID   string
	Text        string // the text/plain part, or the text of the HTML part
	TooLarge    bool   // the text and attachments were left out
	Attachments []Attachment
}

// Attachment is a file of a message.
type Attachment struct {
	Name        string
	ContentType string // "" when sent: known by the name's extension
	Data        []byte
}

// dialGuarded connects as imapclient.DialTLS and DialStartTLS do, over a
// connection the account's Dial makes (the run's egress guard: the
// server's name resolved once, and only an address the run may reach
// dialed).
func dialGuarded(ctx context.Context, acct Account, opts *imapclient.Options) (*imapclient.Client, error) {
	dctx, cancel := context.WithTimeout(ctx, imapTimeout)
	defer cancel()
	conn, err := acct.Dial(dctx, "tcp", acct.Address)
	if err != nil {
		return nil, err
	}
	host, _, _ := net.SplitHostPort(acct.Address)
	cfg := &tls.Config{}
	if acct.TLS != nil {
		cfg = acct.TLS.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	o := *opts
	o.TLSConfig = cfg
	if acct.StartTLS {
		return imapclient.NewStartTLS(conn, &o)
	}
	if cfg.NextProtos == nil {
		cfg.NextProtos = []string{"imap"}
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(dctx); err != nil {
		conn.Close()
		return nil, err
	}
	return imapclient.New(tc, &o), nil
}

// ReadMailbox signs in to the account, opens the folder read-only and
// returns the messages q asks for, newest first.
func ReadMailbox(ctx context.Context, acct Account, q Query) ([]Message, error) {
	opts := &imapclient.Options{Dialer: &net.Dialer{Timeout: imapTimeout}, TLSConfig: acct.TLS}
	dial := imapclient.DialTLS
	mode := "TLS"
	if acct.StartTLS {
		dial, mode = imapclient.DialStartTLS, "STARTTLS"
	}
	type dialed struct {
		c   *imapclient.Client
		err error
	}
	ch := make(chan dialed, 1)
	if acct.Dial != nil {
		dial = func(address string, opts *imapclient.Options) (*imapclient.Client, error) {
			return dialGuarded(ctx, acct, opts)
		}
	}
	go func() {
		c, err := dial(acct.Address, opts)
		ch <- dialed{c, err}
	}()
	var c *imapclient.Client
	select {
	case d := <-ch:
		if d.err != nil {
			return nil, fmt.Errorf("cannot reach the IMAP server %s (%s): %v", acct.Address, mode, d.err)
		}
		c = d.c
	case <-ctx.Done():
		go func() {
			if d := <-ch; d.c != nil {
				d.c.Close()
			}
		}()
		return nil, ctx.Err()
	}
	defer c.Close()
	// The run's cancellation ends the exchange.
	defer context.AfterFunc(ctx, func() { c.Close() })()
	fail := func(format string, args ...any) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf(format, args...)
	}

	if err := c.Login(acct.Username, acct.Password).Wait(); err != nil {
		var refused *imap.Error
		if errors.As(err, &refused) {
			return nil, fail("the IMAP server %s refused the sign-in of %s (%w): %s", acct.Address, acct.Username, ErrAuth, refused.Text)
		}
		return nil, fail("signing in to the IMAP server %s: %v", acct.Address, err)
	}
	if _, err := c.Select(q.Folder, &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
		return nil, fail("the folder %q of %s cannot be opened: %v", q.Folder, acct.Username, err)
	}
	criteria := &imap.SearchCriteria{Since: q.Since}
	if q.Sender != "" {
		criteria.Header = append(criteria.Header, imap.SearchCriteriaHeaderField{Key: "From", Value: q.Sender})
	}
	if q.Subject != "" {
		criteria.Header = append(criteria.Header, imap.SearchCriteriaHeaderField{Key: "Subject", Value: q.Subject})
	}
	found, err := c.UIDSearch(criteria, nil).Wait()
	if err != nil {
		return nil, fail("searching the folder %q: %v", q.Folder, err)
	}
	// UIDs grow as messages arrive: the largest are the newest.
	uids := found.AllUIDs()
	slices.SortFunc(uids, func(a, b imap.UID) int { return int(b) - int(a) })
	if len(uids) > q.Max {
		uids = uids[:q.Max]
	}
	if len(uids) == 0 {
		return []Message{}, nil
	}
	heads, err := c.Fetch(imap.UIDSetNum(uids...), &imap.FetchOptions{UID: true, Envelope: true, InternalDate: true, RFC822Size: true}).Collect()
	if err != nil {
		return nil, fail("reading the messages of %q: %v", q.Folder, err)
	}
	msgs := make([]Message, 0, len(heads))
	for _, h := range heads {
		m := Message{UID: uint32(h.UID), Date: h.InternalDate}
		if env := h.Envelope; env != nil {
			m.From, m.To, m.CC = addresses(env.From), addresses(env.To), addresses(env.Cc)
			m.Subject, m.MessageID = env.Subject, env.MessageID
			if !env.Date.IsZero() {
				m.Date = env.Date
			}
		}
		if q.WithBody {
			if h.RFC822Size > MaxMessageBytes {
				m.TooLarge = true
			} else if err := readBody(c, h.UID, &m); err != nil {
				return nil, fail("reading the message %q: %v", m.Subject, err)
			}
		}
		msgs = append(msgs, m)
	}
	// Newest first, by the server's order of arrival.
	slices.SortFunc(msgs, func(a, b Message) int { return int(b.UID) - int(a.UID) })
	return msgs, nil
}

func addresses(as []imap.Address) []string {
	var out []string
	for _, a := range as {
		addr := a.Addr()
		if addr == "" {
			continue
		}
		if a.Name != "" {
			addr = (&mail.Address{Name: a.Name, Address: addr}).String()
		}
		out = append(out, addr)
	}
	return out
}

// readBody fetches a message whole, without marking it seen, and keeps
// its text and attachments in m.
func readBody(c *imapclient.Client, uid imap.UID, m *Message) error {
	section := &imap.FetchItemBodySection{Peek: true}
	bufs, err := c.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{section}}).Collect()
	if err != nil {
		return err
	}
	if len(bufs) == 0 {
		return errors.New("the server sent nothing")
	}
	raw := bufs[0].FindBodySection(section)
	plain, htmlBody, atts, err := parseMail(raw)
	if err != nil {
		return err
	}
	m.Text = plain
	if m.Text == "" && htmlBody != "" {
		m.Text = htmlText(htmlBody)
	}
	m.Attachments = atts
	return nil
}

// parseMail returns the first text/plain part of a message, its first
// text/html part and its attachments (parts with a file name).
func parseMail(raw []byte) (plain, htmlBody string, atts []Attachment, err error) {
	r, err := mail.CreateReader(bytes.NewReader(raw))
	if err != nil && !message.IsUnknownCharset(err) {
		return "", "", nil, fmt.Errorf("the message cannot be parsed: %v", err)
	}
	defer r.Close()
	atts = []Attachment{}
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			if message.IsUnknownCharset(err) || message.IsUnknownEncoding(err) {
				continue
			}
			return plain, htmlBody, atts, fmt.Errorf("a part of the message cannot be parsed: %v", err)
		}
		data, err := io.ReadAll(io.LimitReader(p.Body, MaxMessageBytes))
		if err != nil {
			return plain, htmlBody, atts, fmt.Errorf("a part of the message cannot be read: %v", err)
		}
		switch h := p.Header.(type) {
		case *mail.AttachmentHeader:
			name, _ := h.Filename()
			ct, _, _ := h.ContentType()
			atts = append(atts, Attachment{Name: attachmentName(name, ct, len(atts)), ContentType: ct, Data: data})
		case *mail.InlineHeader:
			ct, params, _ := h.ContentType()
			switch {
			case params["name"] != "" && !strings.HasPrefix(ct, "text/"):
				// An inline image or file: kept as an attachment.
				atts = append(atts, Attachment{Name: attachmentName(params["name"], ct, len(atts)), ContentType: ct, Data: data})
			case ct == "text/plain" && plain == "":
				plain = strings.TrimSpace(string(data))
			case ct == "text/html" && htmlBody == "":
				htmlBody = string(data)
			}
		}
	}
	return plain, htmlBody, atts, nil
}

// attachmentName is the name to save an attachment under: its own, else
// one made from its type.
func attachmentName(name, contentType string, n int) string {
	if strings.TrimSpace(name) != "" {
		return name
	}
	ext := ""
	if exts, _ := mime.ExtensionsByType(contentType); len(exts) > 0 {
		ext = exts[0]
	}
	return fmt.Sprintf("attachment-%d%s", n+1, ext)
}

var (
	htmlDrop  = regexp.MustCompile(`(?is)<(script|style|head)\b.*?</(script|style|head)>`)
	htmlBreak = regexp.MustCompile(`(?i)<(br|/p|/div|/tr|/li|/h[1-6])\b[^>]*>`)
	htmlTag   = regexp.MustCompile(`<[^>]*>`)
	blankRuns = regexp.MustCompile(`\n[ \t]*(\n[ \t]*)+`)
)

// htmlText is the text of an HTML body, for a message that has no
// text/plain part.
func htmlText(s string) string {
	s = htmlDrop.ReplaceAllString(s, "")
	s = htmlBreak.ReplaceAllString(s, "\n")
	s = html.UnescapeString(htmlTag.ReplaceAllString(s, ""))
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.TrimSpace(blankRuns.ReplaceAllString(strings.Join(lines, "\n"), "\n\n"))
}
