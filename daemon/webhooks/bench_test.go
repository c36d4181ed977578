package webhooks_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/webhooks"
)

// benchReceiver reads the whole body and answers 204, as a quick receiver
// does.
func benchReceiver(b *testing.B) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkPayloadSend is the daemon's work for one terminal webhook:
// building the payload, signing it and one delivery to a local receiver.
func BenchmarkPayloadSend(b *testing.B) {
	srv := benchReceiver(b)
	run := taskRun("tsk_v2_490440779503357994", client.RunTypeTaskV2)
	info := webhooks.Info{OrganizationID: "o_1", Summary: "Found it.", WorkflowRunID: "wr_7", WorkflowID: "w_7"}
	var s webhooks.Sender
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		body, err := webhooks.Payload(run, info)
		if err != nil {
			b.Fatal(err)
		}
		if d := s.Send(ctx, srv.URL, testKey, body); !d.OK() {
			b.Fatalf("delivery = %+v", d)
		}
	}
}

// BenchmarkPlainPost is the ceiling: an unsigned http.Post of the same
// bytes to the same kind of receiver.
func BenchmarkPlainPost(b *testing.B) {
	srv := benchReceiver(b)
	run := taskRun("tsk_v2_490440779503357994", client.RunTypeTaskV2)
	body, err := webhooks.Payload(run, webhooks.Info{OrganizationID: "o_1", Summary: "Found it.", WorkflowRunID: "wr_7", WorkflowID: "w_7"})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}

// BenchmarkPayload is the payload alone.
func BenchmarkPayload(b *testing.B) {
	run := taskRun("tsk_v2_490440779503357994", client.RunTypeTaskV2)
	info := webhooks.Info{OrganizationID: "o_1", Summary: "Found it.", WorkflowRunID: "wr_7", WorkflowID: "w_7"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := webhooks.Payload(run, info); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSend is the delivery alone (signing included), to compare with
// BenchmarkPlainPost.
func BenchmarkSend(b *testing.B) {
	srv := benchReceiver(b)
	body, err := webhooks.Payload(taskRun("tsk_v2_490440779503357994", client.RunTypeTaskV2), webhooks.Info{OrganizationID: "o_1"})
	if err != nil {
		b.Fatal(err)
	}
	var s webhooks.Sender
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if d := s.Send(ctx, srv.URL, testKey, body); !d.OK() {
			b.Fatalf("delivery = %+v", d)
		}
	}
}
