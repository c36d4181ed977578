package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/client/webhook"
)

// A receiver verifies the body exactly as it arrived. Decoding it and
// encoding it again gives other bytes, and those do not verify.
func ExampleVerify() {
	key := "abk_test_0123456789abcdef" // the organization's API key
	// What arrived: the raw body and the x-skyvern-signature header.
	raw := []byte(`{"run_id":"tsk_v2_490440779503357994","status":"completed","output":{"price":3,"count":2}}`)
	signature := "bc42a0379eaa0d0af85dcc50392c11ce3eac19ecef3400f4687989b0fcd968c0"

	if err := webhook.Verify(key, raw, signature); err != nil {
		fmt.Println("rejected:", err)
		return
	}
	fmt.Println("verified")

	// Wrong: re-serializing sorts the keys and changes the bytes.
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	reencoded, _ := json.Marshal(m)
	err := webhook.Verify(key, reencoded, signature)
	fmt.Println("re-encoded:", err, errors.Is(err, webhook.ErrInvalidSignature))

	// Output:
	// verified
	// re-encoded: webhook: invalid signature true
}

// A receiver that treats run_id as the idempotency key: deliveries can be
// repeated (the webhook retry operation re-sends a payload), so a second
// delivery of the same run is acknowledged and otherwise ignored.
func ExampleHandler() {
	const key = "abk_test_0123456789abcdef"

	var mu sync.Mutex
	seen := make(map[string]bool)
	receiver := webhook.Handler(key, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := webhook.PayloadFromContext(r.Context()) // always there behind Handler
		mu.Lock()
		dup := seen[p.RunID]
		seen[p.RunID] = true
		mu.Unlock()
		if dup {
			fmt.Fprintf(w, "already handled %s", p.RunID)
			return
		}
		// Hand the work to a queue and answer quickly: the service gives
		// up on slow receivers.
		fmt.Fprintf(w, "accepted %s (%s)", p.RunID, p.Status)
	}))
	srv := httptest.NewServer(receiver)
	defer srv.Close()

	body, err := webhook.Body(webhook.Payload{
		RunID:   "tsk_v2_490440779503357994",
		Status:  client.RunStatusCompleted,
		Output:  json.RawMessage(`{"price": 3.0}`),
		RunType: client.RunTypeTaskV2,
	})
	if err != nil {
		panic(err)
	}
	deliver := func(signingKey string) {
		req, err := webhook.NewRequest(context.Background(), srv.URL, signingKey, body, time.Now())
		if err != nil {
			panic(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		text, _ := io.ReadAll(resp.Body)
		fmt.Println(resp.StatusCode, strings.TrimSpace(string(text)))
	}
	deliver(key)             // the delivery
	deliver(key)             // a retried delivery
	deliver("a-guessed-key") // a forgery

	// Output:
	// 200 accepted tsk_v2_490440779503357994 (completed)
	// 200 already handled tsk_v2_490440779503357994
	// 401 webhook: invalid signature
}
