// Package mailtest serves mail on loopback for tests and for trying abctl
// by hand: an SMTP server that keeps every message it receives. It
// contacts nothing and listens on loopback addresses only.
package mailtest

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strconv"
	"strings"
	"sync"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Message is one message an SMTP server received: the envelope and the
// message as sent.
type Message struct {
	From string
	To   []string
	Data []byte
}

// Parse reads the message's headers and body.
func (m Message) Parse() (*mail.Message, error) {
	return mail.ReadMessage(strings.NewReader(string(m.Data)))
}

// SMTPServer is an SMTP server on loopback. With a user, it requires that
// account (PLAIN, without TLS: it is loopback); without one it takes mail
// from anyone.
type SMTPServer struct {
	user, password string
	srv            *smtp.Server
	ln             net.Listener

	mu       sync.Mutex
	messages []Message
	notify   func(Message)
}

// SMTPOption configures an SMTPServer.
type SMTPOption func(*SMTPServer)

// WithAccount requires sign-in as user with password.
func WithAccount(user, password string) SMTPOption {
	return func(s *SMTPServer) { s.user, s.password = user, password }
}

// OnMessage calls fn with each message received, after it is kept.
func OnMessage(fn func(Message)) SMTPOption {
	return func(s *SMTPServer) { s.notify = fn }
}

// StartSMTP listens on addr (a loopback address; port 0 picks a free one)
// and serves until Close.
func StartSMTP(addr string, opts ...SMTPOption) (*SMTPServer, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("smtp address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("smtp address %q: only loopback addresses are served", addr)
	}
	s := &SMTPServer{}
	for _, o := range opts {
		o(s)
	}
	s.ln, err = net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s.srv = smtp.NewServer(backend{s})
	s.srv.Domain = "localhost"
	s.srv.AllowInsecureAuth = true
	go s.srv.Serve(s.ln)
	return s, nil
}

// Addr is the host:port the server listens on.
func (s *SMTPServer) Addr() string { return s.ln.Addr().String() }

// HostPort is Addr split, the port as a number.
func (s *SMTPServer) HostPort() (string, int) {
	host, port, _ := net.SplitHostPort(s.Addr())
	n, _ := strconv.Atoi(port)
	return host, n
}

// Messages returns the messages received so far, in order.
func (s *SMTPServer) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// Close stops the server.
func (s *SMTPServer) Close() error { return s.srv.Close() }

type backend struct{ s *SMTPServer }

func (b backend) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{s: b.s}, nil }

type session struct {
	s      *SMTPServer
	authed bool
	msg    Message
}

func (x *session) AuthMechanisms() []string {
	if x.s.user == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (x *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != x.s.user || pass != x.s.password {
			return errors.New("invalid credentials")
		}
		x.authed = true
		return nil
	}), nil
}

func (x *session) Mail(from string, _ *smtp.MailOptions) error {
	if x.s.user != "" && !x.authed {
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}
	}
	x.msg.From = from
	return nil
}

func (x *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	x.msg.To = append(x.msg.To, to)
	return nil
}

func (x *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	x.msg.Data = b
	x.s.mu.Lock()
	x.s.messages = append(x.s.messages, x.msg)
	notify := x.s.notify
	x.s.mu.Unlock()
	if notify != nil {
		notify(x.msg)
	}
	x.msg = Message{}
	return nil
}

func (x *session) Reset()        { x.msg = Message{} }
func (x *session) Logout() error { return nil }

// Part is one part of a message: its content type, the file name of an
// attachment, and its decoded body.
type Part struct {
	ContentType string
	Filename    string
	Body        []byte
}

// Parts returns the parts of a multipart message, decoded from base64 or
// quoted-printable; a message of one part is that part. A part that cannot
// be read ends the list.
func Parts(m *mail.Message) []Part {
	mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mt, "multipart/") {
		body, _ := io.ReadAll(decoded(m.Header.Get("Content-Transfer-Encoding"), m.Body))
		return []Part{{ContentType: mt, Body: body}}
	}
	var parts []Part
	mr := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err != nil {
			return parts
		}
		body, err := io.ReadAll(decoded(p.Header.Get("Content-Transfer-Encoding"), p))
		if err != nil {
			return parts
		}
		ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		parts = append(parts, Part{ContentType: ct, Filename: p.FileName(), Body: body})
	}
}

func decoded(encoding string, r io.Reader) io.Reader {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "base64":
		return base64.NewDecoder(base64.StdEncoding, r)
	case "quoted-printable":
		return quotedprintable.NewReader(r)
	}
	return r
}
