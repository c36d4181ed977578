package blocks

// The send_email block: a message through an SMTP server, with the run's
// files (or files at URLs) attached. The server is the block's
// (custom_smtp_host, _port, _username, _password), else the one its
// smtp_*_secret_parameter_key parameters name, else the engine's
// (Env.SMTP: the daemon's --smtp-* configuration). A value that is a
// credential's placeholder is revealed only to be sent to the server.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/smtp"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/localrun/engine/blocks/mail"
	"github.com/abctl/abctl/localrun/engine/steplog"
)

// SMTP is an SMTP server to send mail through (see package blocks/mail).
type SMTP = mail.SMTP

// dialer connects to a server the run names: through the run's egress
// guard, whose organization decides; nil without a policy.
func (r runAccess) dialer() mail.Dialer {
	if r.guard == nil {
		return nil
	}
	return r.guard.DialContext
}

// smtpOf is the server of a send_email block, and how to dial it: dial is
// nil for the operator's server (Env.SMTP, given by the daemon's flags),
// which is trusted wherever it is (a shared daemon's guard would refuse
// the loopback or private relay an operator typically gives); a server
// the run names is dialed through the run's egress guard.
func (in mailBlocks) smtpOf(ctx context.Context, b *client.SendEmailBlock, sc *scope) (s SMTP, dial mail.Dialer, err error) {
	s = SMTP{Host: b.CustomSMTPHost, Port: b.CustomSMTPPort, Username: b.CustomSMTPUsername, Password: b.CustomSMTPPassword}
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
			return s, nil, err
		}
		*f.dst = v
	}
	if s.Port == 0 {
		v, err := param(keyOf(b.SMTPPortSecretParameterKey, b.SMTPPort))
		if err != nil {
			return s, nil, err
		}
		if v != "" {
			if s.Port, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
				return s, nil, fmt.Errorf("the SMTP port %q is not a number", v)
			}
		}
	}
	if s.Host == "" {
		def := in.smtp
		if def.Host == "" {
			return s, nil, errors.New("no SMTP server: give the block custom_smtp_host (or an smtp_host_secret_parameter_key), or start the daemon with --smtp-host")
		}
		s = def
	} else {
		dial = in.dialer()
	}
	// Placeholders of credentials become their values for the server only.
	for _, v := range []*string{&s.Host, &s.Username, &s.Password} {
		real, _, err := in.secrets.Reveal(ctx, *v)
		if err != nil {
			return s, nil, err
		}
		*v = real
	}
	if s.Port == 0 {
		s.Port = 587
	}
	return s, dial, nil
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
	server, dial, err := in.smtpOf(ctx, b, sc)
	if err != nil {
		return nil, err
	}
	var files []mail.Attachment
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
	data := mail.Compose(msg["sender"], to, msg["subject"], msg["body"], files, time.Now())
	addr := net.JoinHostPort(server.Host, strconv.Itoa(server.Port))
	var auth smtp.Auth
	if server.Username != "" {
		auth = smtp.PlainAuth("", server.Username, server.Password, server.Host)
	}
	done := make(chan error, 1)
	go func() { done <- mail.Send(ctx, dial, addr, server.Host, auth, msg["sender"], to, data) }()
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
		names[i] = f.Name
	}
	return map[string]any{"success": true, "recipients": to, "subject": msg["subject"], "attachments": names}, nil
}

// attachment reads a file to attach: one of the run's files by its name, or
// a file at an http(s) URL.
func (in mailBlocks) attachment(ctx context.Context, ref string) (mail.Attachment, error) {
	if strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://") {
		p, err := in.files.FetchUpload(ctx, ref)
		if err != nil {
			return mail.Attachment{}, err
		}
		data, err := os.ReadFile(p)
		return mail.Attachment{Name: filepath.Base(p), Data: data}, err
	}
	p, ok := in.files.Path(ref)
	if !ok {
		return mail.Attachment{}, errors.New("it is neither a file of this run nor an http(s) URL")
	}
	data, err := os.ReadFile(p)
	return mail.Attachment{Name: filepath.Base(p), Data: data}, err
}
