package blocks

// The send_email block: a message through an SMTP server, with the run's
// files (or files at URLs) attached. The server is the block's
// (custom_smtp_host, _port, _username, _password), else the one its
// smtp_*_secret_parameter_key parameters name, else the engine's
// (Env.SMTP: the daemon's --smtp-* configuration). A value that is a
// credential's placeholder is revealed only to be sent to the server.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/smtp"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/localrun/engine/steplog"
)

// SMTP is an SMTP server to send mail through.
type SMTP struct {
	Host     string
	Port     int // 0 means 587
	Username string
	Password string
	// guard connects to the server when the run named it; nil for the
	// operator's server (Env.SMTP, given by the daemon's flags), which is
	// trusted wherever it is: a shared daemon's guard would refuse the
	// loopback or private relay an operator typically gives.
	guard *egress.Guard
}

func (in mailBlocks) smtpOf(ctx context.Context, b *client.SendEmailBlock, sc *scope) (SMTP, error) {
	s := SMTP{Host: b.CustomSMTPHost, Port: b.CustomSMTPPort, Username: b.CustomSMTPUsername, Password: b.CustomSMTPPassword}
	param := func(key string) (string, error) {
		if key == "" {
			return "", nil
		}
		v, ok := sc.vars()[key]
		if !ok {
			return "", fmt.Errorf("the parameter %q (named by an smtp_*_secret_parameter_key) is not defined", key)
		}
		switch x := v.(type) {
		case string:
			return x, nil
		case map[string]any: // a secret credential: its value
			if sv, ok := x["secret_value"].(string); ok {
				return sv, nil
			}
			if pw, ok := x["password"].(string); ok {
				return pw, nil
			}
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64), nil
		}
		return "", fmt.Errorf("the parameter %q holds %T, not a text", key, v)
	}
	// A stored agent carries the parameters' records instead of their
	// keys (as the service answers them).
	keyOf := func(key string, rec *client.Parameter) string {
		if key == "" && rec != nil {
			return rec.Key
		}
		return key
	}
	for _, f := range []struct {
		key string
		dst *string
	}{
		{keyOf(b.SMTPHostSecretParameterKey, b.SMTPHost), &s.Host},
		{keyOf(b.SMTPUsernameSecretParameterKey, b.SMTPUsername), &s.Username},
		{keyOf(b.SMTPPasswordSecretParameterKey, b.SMTPPassword), &s.Password},
	} {
		if *f.dst != "" {
			continue
		}
		v, err := param(f.key)
		if err != nil {
			return s, err
		}
		*f.dst = v
	}
	if s.Port == 0 {
		v, err := param(keyOf(b.SMTPPortSecretParameterKey, b.SMTPPort))
		if err != nil {
			return s, err
		}
		if v != "" {
			if s.Port, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
				return s, fmt.Errorf("the SMTP port %q is not a number", v)
			}
		}
	}
	if s.Host == "" {
		def := in.smtp
		if def.Host == "" {
			return s, errors.New("no SMTP server: give the block custom_smtp_host (or an smtp_host_secret_parameter_key), or start the daemon with --smtp-host")
		}
		s = def
		s.guard = nil // the operator's
	} else {
		s.guard = in.guard // the run's server: its organization's guard decides
	}
	// Placeholders of credentials become their values for the server only.
	for _, v := range []*string{&s.Host, &s.Username, &s.Password} {
		real, _, err := in.secrets.Reveal(ctx, *v)
		if err != nil {
			return s, err
		}
		*v = real
	}
	if s.Port == 0 {
		s.Port = 587
	}
	return s, nil
}

func (in mailBlocks) sendEmail(ctx context.Context, b *client.SendEmailBlock, sc *scope) (any, error) {
	var err error
	fields := map[string]*string{"sender": &b.Sender, "subject": &b.Subject, "body": &b.Body}
	msg := map[string]string{}
	for name, f := range fields {
		if msg[name], err = sc.render(*f); err != nil {
			return nil, err
		}
	}
	var to []string
	for _, r := range b.Recipients {
		v, err := sc.render(r)
		if err != nil {
			return nil, err
		}
		for _, a := range strings.Split(v, ",") {
			if a = strings.TrimSpace(a); a != "" {
				to = append(to, a)
			}
		}
	}
	if len(to) == 0 {
		return nil, errors.New("the email has no recipient")
	}
	rec, err := in.steps.Start(b.Label, steplog.Action{Type: "send_email", Text: fmt.Sprintf("%q to %s", msg["subject"], strings.Join(to, ", "))})
	if err != nil {
		return nil, err
	}
	out, err := in.deliver(ctx, b, sc, msg, to)
	result := ""
	if err == nil {
		result = "sent"
	}
	in.steps.End(rec, "", result, err)
	return out, err
}

func (in mailBlocks) deliver(ctx context.Context, b *client.SendEmailBlock, sc *scope, msg map[string]string, to []string) (any, error) {
	server, err := in.smtpOf(ctx, b, sc)
	if err != nil {
		return nil, err
	}
	var files []attachment
	for _, a := range b.FileAttachments {
		ref, err := sc.render(a)
		if err != nil {
			return nil, err
		}
		if ref = strings.TrimSpace(ref); ref == "" {
			continue
		}
		f, err := in.attachment(ctx, ref)
		if err != nil {
			return nil, fmt.Errorf("attachment %q: %w", ref, err)
		}
		files = append(files, f)
	}
	data := composeMail(msg["sender"], to, msg["subject"], msg["body"], files, time.Now())
	addr := net.JoinHostPort(server.Host, strconv.Itoa(server.Port))
	var auth smtp.Auth
	if server.Username != "" {
		auth = smtp.PlainAuth("", server.Username, server.Password, server.Host)
	}
	done := make(chan error, 1)
	go func() { done <- sendMail(ctx, server.guard, addr, server.Host, auth, msg["sender"], to, data) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if egress.IsRefused(err) {
		return nil, fmt.Errorf("the SMTP server %s: %v", addr, err)
	}
	if err != nil {
		// The server's answer, never the password.
		return nil, fmt.Errorf("the SMTP server %s refused the email: %s", addr, in.secrets.Scrub(err.Error()))
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.name
	}
	return map[string]any{"success": true, "recipients": to, "subject": msg["subject"], "attachments": names}, nil
}

type attachment struct {
	name string
	data []byte
}

// attachment reads a file to attach: one of the run's files by its name, or
// a file at an http(s) URL.
func (in mailBlocks) attachment(ctx context.Context, ref string) (attachment, error) {
	if strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://") {
		p, err := in.files.FetchUpload(ctx, ref)
		if err != nil {
			return attachment{}, err
		}
		data, err := os.ReadFile(p)
		return attachment{name: filepath.Base(p), data: data}, err
	}
	p, ok := in.files.Path(ref)
	if !ok {
		return attachment{}, errors.New("it is neither a file of this run nor an http(s) URL")
	}
	data, err := os.ReadFile(p)
	return attachment{name: filepath.Base(p), data: data}, err
}

// composeMail makes an RFC 5322 message: plain text, or multipart/mixed
// with the attachments.
func composeMail(from string, to []string, subject, body string, files []attachment, now time.Time) []byte {
	var b bytes.Buffer
	hdr := func(k, v string) { fmt.Fprintf(&b, "%s: %s\r\n", k, v) }
	hdr("From", from)
	hdr("To", strings.Join(to, ", "))
	hdr("Subject", mime.QEncoding.Encode("utf-8", subject))
	hdr("Date", now.Format(time.RFC1123Z))
	hdr("MIME-Version", "1.0")
	text := func() {
		hdr("Content-Type", `text/plain; charset="utf-8"`)
		hdr("Content-Transfer-Encoding", "base64")
		b.WriteString("\r\n")
		writeBase64(&b, []byte(body))
	}
	if len(files) == 0 {
		text()
		return b.Bytes()
	}
	var rb [12]byte
	rand.Read(rb[:])
	boundary := "abctl-" + hex.EncodeToString(rb[:])
	hdr("Content-Type", `multipart/mixed; boundary="`+boundary+`"`)
	b.WriteString("\r\n")
	fmt.Fprintf(&b, "--%s\r\n", boundary)
	text()
	for _, f := range files {
		fmt.Fprintf(&b, "--%s\r\n", boundary)
		ct := mime.TypeByExtension(filepath.Ext(f.name))
		if ct == "" {
			ct = "application/octet-stream"
		}
		hdr("Content-Type", ct)
		hdr("Content-Transfer-Encoding", "base64")
		hdr("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.name}))
		b.WriteString("\r\n")
		writeBase64(&b, f.data)
	}
	fmt.Fprintf(&b, "--%s--\r\n", boundary)
	return b.Bytes()
}

func writeBase64(b *bytes.Buffer, data []byte) {
	enc := base64.StdEncoding.EncodeToString(data)
	for len(enc) > 76 {
		b.WriteString(enc[:76])
		b.WriteString("\r\n")
		enc = enc[76:]
	}
	b.WriteString(enc)
	b.WriteString("\r\n")
}

// sendMail is smtp.SendMail over a connection made by guard (nil: no
// policy), whose DialContext resolves the server once and connects only
// to an address the run may reach: STARTTLS when the server offers it,
// then auth (when given), the envelope and the message.
func sendMail(ctx context.Context, guard *egress.Guard, addr, host string, auth smtp.Auth, from string, to []string, msg []byte) error {
	for _, line := range append([]string{from}, to...) {
		if strings.ContainsAny(line, "\r\n") {
			return errors.New("smtp: A line must not contain CR or LF")
		}
	}
	var conn net.Conn
	var err error
	if guard != nil {
		conn, err = guard.DialContext(ctx, "tcp", addr)
	} else {
		var d net.Dialer
		conn, err = d.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return err
	}
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		conn.Close()
		return err
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok {
		if err := c.StartTLS(&tls.Config{ServerName: host}); err != nil {
			return err
		}
	}
	if auth != nil {
		if ok, _ := c.Extension("AUTH"); !ok {
			return errors.New("smtp: server doesn't support AUTH")
		}
		if err := c.Auth(auth); err != nil {
			return err
		}
	}
	if err := c.Mail(from); err != nil {
		return err
	}
	for _, addr := range to {
		if err := c.Rcpt(addr); err != nil {
			return err
		}
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(msg); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}
