package blocks

// Reading a mailbox over IMAP for email_inbox blocks, with go-imap; the
// messages are parsed with go-message.

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"slices"
	"strings"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-message"
	_ "github.com/emersion/go-message/charset" // the charsets of older mail
	"github.com/emersion/go-message/mail"
)

// dialGuarded connects as imapclient.DialTLS and DialStartTLS do, over a
// connection the account's egress guard makes: the server's name resolved
// once, and only an address the run may reach dialed.
func dialGuarded(ctx context.Context, acct mailAccount, opts *imapclient.Options) (*imapclient.Client, error) {
	dctx, cancel := context.WithTimeout(ctx, imapTimeout)
	defer cancel()
	conn, err := acct.guard.DialContext(dctx, "tcp", acct.address)
	if err != nil {
		return nil, err
	}
	host, _, _ := net.SplitHostPort(acct.address)
	cfg := &tls.Config{}
	if acct.tls != nil {
		cfg = acct.tls.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	o := *opts
	o.TLSConfig = cfg
	if acct.startTLS {
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

// readMailbox signs in to the account, opens the folder read-only and
// returns the messages q asks for, newest first.
func readMailbox(ctx context.Context, acct mailAccount, q mailQuery) ([]mailMessage, error) {
	opts := &imapclient.Options{Dialer: &net.Dialer{Timeout: imapTimeout}, TLSConfig: acct.tls}
	dial := imapclient.DialTLS
	mode := "TLS"
	if acct.startTLS {
		dial, mode = imapclient.DialStartTLS, "STARTTLS"
	}
	type dialed struct {
		c   *imapclient.Client
		err error
	}
	ch := make(chan dialed, 1)
	if acct.guard != nil {
		dial = func(address string, opts *imapclient.Options) (*imapclient.Client, error) {
			return dialGuarded(ctx, acct, opts)
		}
	}
	go func() {
		c, err := dial(acct.address, opts)
		ch <- dialed{c, err}
	}()
	var c *imapclient.Client
	select {
	case d := <-ch:
		if d.err != nil {
			return nil, fmt.Errorf("cannot reach the IMAP server %s (%s): %v", acct.address, mode, d.err)
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

	if err := c.Login(acct.username, acct.password).Wait(); err != nil {
		var refused *imap.Error
		if errors.As(err, &refused) {
			return nil, fail("the IMAP server %s refused the sign-in of %s (%w): %s", acct.address, acct.username, errIMAPAuth, refused.Text)
		}
		return nil, fail("signing in to the IMAP server %s: %v", acct.address, err)
	}
	if _, err := c.Select(q.folder, &imap.SelectOptions{ReadOnly: true}).Wait(); err != nil {
		return nil, fail("the folder %q of %s cannot be opened: %v", q.folder, acct.username, err)
	}
	criteria := &imap.SearchCriteria{Since: q.since}
	if q.sender != "" {
		criteria.Header = append(criteria.Header, imap.SearchCriteriaHeaderField{Key: "From", Value: q.sender})
	}
	if q.subject != "" {
		criteria.Header = append(criteria.Header, imap.SearchCriteriaHeaderField{Key: "Subject", Value: q.subject})
	}
	found, err := c.UIDSearch(criteria, nil).Wait()
	if err != nil {
		return nil, fail("searching the folder %q: %v", q.folder, err)
	}
	// UIDs grow as messages arrive: the largest are the newest.
	uids := found.AllUIDs()
	slices.SortFunc(uids, func(a, b imap.UID) int { return int(b) - int(a) })
	if len(uids) > q.max {
		uids = uids[:q.max]
	}
	if len(uids) == 0 {
		return []mailMessage{}, nil
	}
	heads, err := c.Fetch(imap.UIDSetNum(uids...), &imap.FetchOptions{UID: true, Envelope: true, InternalDate: true, RFC822Size: true}).Collect()
	if err != nil {
		return nil, fail("reading the messages of %q: %v", q.folder, err)
	}
	msgs := make([]mailMessage, 0, len(heads))
	for _, h := range heads {
		m := mailMessage{uid: uint32(h.UID), date: h.InternalDate}
		if env := h.Envelope; env != nil {
			m.from, m.to, m.cc = addresses(env.From), addresses(env.To), addresses(env.Cc)
			m.subject, m.messageID = env.Subject, env.MessageID
			if !env.Date.IsZero() {
				m.date = env.Date
			}
		}
		if q.withBody {
			if h.RFC822Size > maxMailBytes {
				m.tooLarge = true
			} else if err := readBody(c, h.UID, &m); err != nil {
				return nil, fail("reading the message %q: %v", m.subject, err)
			}
		}
		msgs = append(msgs, m)
	}
	// Newest first, by the server's order of arrival.
	slices.SortFunc(msgs, func(a, b mailMessage) int { return int(b.uid) - int(a.uid) })
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
func readBody(c *imapclient.Client, uid imap.UID, m *mailMessage) error {
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
	m.text = plain
	if m.text == "" && htmlBody != "" {
		m.text = htmlText(htmlBody)
	}
	m.attachments = atts
	return nil
}

// parseMail returns the first text/plain part of a message, its first
// text/html part and its attachments (parts with a file name).
func parseMail(raw []byte) (plain, htmlBody string, atts []mailAttachment, err error) {
	r, err := mail.CreateReader(bytes.NewReader(raw))
	if err != nil && !message.IsUnknownCharset(err) {
		return "", "", nil, fmt.Errorf("the message cannot be parsed: %v", err)
	}
	defer r.Close()
	atts = []mailAttachment{}
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
		data, err := io.ReadAll(io.LimitReader(p.Body, maxMailBytes))
		if err != nil {
			return plain, htmlBody, atts, fmt.Errorf("a part of the message cannot be read: %v", err)
		}
		switch h := p.Header.(type) {
		case *mail.AttachmentHeader:
			name, _ := h.Filename()
			ct, _, _ := h.ContentType()
			atts = append(atts, mailAttachment{name: attachmentName(name, ct, len(atts)), contentType: ct, data: data})
		case *mail.InlineHeader:
			ct, params, _ := h.ContentType()
			switch {
			case params["name"] != "" && !strings.HasPrefix(ct, "text/"):
				// An inline image or file: kept as an attachment.
				atts = append(atts, mailAttachment{name: attachmentName(params["name"], ct, len(atts)), contentType: ct, data: data})
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
