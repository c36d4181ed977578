package mailtest

import (
	"net/smtp"
	"strings"
	"testing"
)

// TestSMTP: the server keeps what it is sent, requires its account when it
// has one, and refuses to listen off loopback.
func TestSMTP(t *testing.T) {
	seen := make(chan Message, 4)
	s, err := StartSMTP("127.0.0.1:0", WithAccount("robot", "pw"), OnMessage(func(m Message) { seen <- m }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	host, _ := s.HostPort()
	msg := "Subject: hello\r\n\r\nbody\r\n"
	if err := smtp.SendMail(s.Addr(), nil, "a@example.com", []string{"b@example.com"}, []byte(msg)); err == nil {
		t.Error("mail without signing in was taken")
	}
	if err := smtp.SendMail(s.Addr(), smtp.PlainAuth("", "robot", "wrong", host), "a@example.com", []string{"b@example.com"}, []byte(msg)); err == nil {
		t.Error("a wrong password was taken")
	}
	if err := smtp.SendMail(s.Addr(), smtp.PlainAuth("", "robot", "pw", host), "a@example.com", []string{"b@example.com", "c@example.com"}, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	got := s.Messages()
	if len(got) != 1 || got[0].From != "a@example.com" || strings.Join(got[0].To, ",") != "b@example.com,c@example.com" || len(seen) != 1 {
		t.Fatalf("received %+v (notified %d)", got, len(seen))
	}
	m, err := got[0].Parse()
	if err != nil || m.Header.Get("Subject") != "hello" {
		t.Errorf("parsed %v, %v", m, err)
	}
	if _, err := StartSMTP("0.0.0.0:0"); err == nil || !strings.Contains(err.Error(), "only loopback") {
		t.Errorf("listening on every address: %v", err)
	}
}
