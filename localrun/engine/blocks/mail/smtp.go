// Package mail sends and reads the mail of the mail blocks: a message
// composed with its attachments and sent through an SMTP server
// (send_email, human_interaction), and the messages of a mailbox read over
// IMAP without marking them seen (email_inbox). It takes plain values (a
// server, an account, how to dial) and returns plain values; which server
// a block uses and the secrets it signs in with are the interpreter's
// (package blocks).
package mail

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
	"path/filepath"
	"strings"
	"time"
)

// SMTP is an SMTP server to send mail through.
type SMTP struct {
	Host     string
	Port     int // 0 means 587
	Username string
	Password string
}

// Dialer connects to a server: the run's egress guard for a server a run
// names, which decides what the run may reach.
type Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

// Compose makes an RFC 5322 message: plain text, or multipart/mixed
// with the attachments.
func Compose(from string, to []string, subject, body string, files []Attachment, now time.Time) []byte {
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
		ct := mime.TypeByExtension(filepath.Ext(f.Name))
		if ct == "" {
			ct = "application/octet-stream"
		}
		hdr("Content-Type", ct)
		hdr("Content-Transfer-Encoding", "base64")
		hdr("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.Name}))
		b.WriteString("\r\n")
		writeBase64(&b, f.Data)
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

// Send is smtp.SendMail over a connection made by dial (nil: a plain
// dialer, without a policy): STARTTLS when the server offers it, then auth
// (when given), the envelope and the message.
func Send(ctx context.Context, dial Dialer, addr, host string, auth smtp.Auth, from string, to []string, msg []byte) error {
	for _, line := range append([]string{from}, to...) {
		if strings.ContainsAny(line, "\r\n") {
			return errors.New("smtp: A line must not contain CR or LF")
		}
	}
	var conn net.Conn
	var err error
	if dial != nil {
		conn, err = dial(ctx, "tcp", addr)
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
