package webhook_test

import (
	"encoding/json"
	"testing"

	"github.com/abctl/abctl/client/webhook"
)

func BenchmarkBody(b *testing.B) {
	p := fullPayload()
	want := vectorNamed(b, "full-payload").Body
	b.ReportAllocs()
	var body []byte
	for b.Loop() {
		var err error
		if body, err = webhook.Body(&p); err != nil {
			b.Fatal(err)
		}
	}
	if string(body) != want {
		b.Fatalf("Body = %s", body)
	}
	b.SetBytes(int64(len(body)))
}

func BenchmarkNormalize(b *testing.B) {
	in := []byte(vectorNamed(b, "full-payload").Input)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := webhook.Normalize(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	v := vectorNamed(b, "full-payload")
	body := []byte(v.Body)
	b.ReportAllocs()
	for b.Loop() {
		if err := webhook.Verify(v.APIKey, body, v.Signature); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBodyStdlib is encoding/json's Marshal of the same payload: the
// floor for Body, whose extra work is the rewrite into the signed form
// (these bytes would not verify).
func BenchmarkBodyStdlib(b *testing.B) {
	p := fullPayload()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(&p); err != nil {
			b.Fatal(err)
		}
	}
}
