package webhook_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/abctl/abctl/client/webhook"
)

type vector struct {
	Name      string `json:"name"`
	Note      string `json:"note"`
	APIKey    string `json:"api_key"`
	Input     string `json:"input"`
	Body      string `json:"body"`
	Signature string `json:"signature"`
}

func loadVectors(tb testing.TB) []vector {
	tb.Helper()
	raw, err := os.ReadFile("testdata/webhook-vectors.json")
	if err != nil {
		tb.Fatal(err)
	}
	var file struct {
		Cases []vector `json:"cases"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		tb.Fatal(err)
	}
	if len(file.Cases) == 0 {
		tb.Fatal("no cases in testdata/webhook-vectors.json")
	}
	return file.Cases
}

func vectorNamed(tb testing.TB, name string) vector {
	tb.Helper()
	for _, v := range loadVectors(tb) {
		if v.Name == name {
			return v
		}
	}
	tb.Fatalf("no vector %q", name)
	return vector{}
}

func TestVectors(t *testing.T) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			body, err := webhook.Normalize([]byte(v.Input))
			if err != nil {
				t.Fatalf("Normalize: %v", err)
			}
			if string(body) != v.Body {
				t.Fatalf("Normalize(input)\n got %s\nwant %s", body, v.Body)
			}
			if again, err := webhook.Normalize(body); err != nil || string(again) != v.Body {
				t.Errorf("Normalize(body) = %s, %v; want the body unchanged", again, err)
			}
			if got := webhook.Sign(v.APIKey, body); got != v.Signature {
				t.Errorf("Sign = %s, want %s", got, v.Signature)
			}
			if err := webhook.Verify(v.APIKey, body, v.Signature); err != nil {
				t.Errorf("Verify(good signature) = %v", err)
			}
			if err := webhook.Verify(v.APIKey, body, "  "+strings.ToUpper(v.Signature)+"\r\n"); err != nil {
				t.Errorf("Verify(uppercase signature with whitespace) = %v", err)
			}

			for _, at := range []int{0, len(body) / 2, len(body) - 1} {
				flipped := []byte(v.Body)
				flipped[at] ^= 0x01
				if err := webhook.Verify(v.APIKey, flipped, v.Signature); !errors.Is(err, webhook.ErrInvalidSignature) {
					t.Errorf("Verify(body with byte %d flipped) = %v, want ErrInvalidSignature", at, err)
				}
			}
			if err := webhook.Verify(v.APIKey+"x", body, v.Signature); !errors.Is(err, webhook.ErrInvalidSignature) {
				t.Errorf("Verify(wrong key) = %v, want ErrInvalidSignature", err)
			}
			if err := webhook.Verify(v.APIKey, body, ""); !errors.Is(err, webhook.ErrMissingSignature) {
				t.Errorf("Verify(empty signature) = %v, want ErrMissingSignature", err)
			}
			// The service signs the bytes as sent; the pretty input has the
			// same meaning but other bytes, so it must not verify.
			if err := webhook.Verify(v.APIKey, []byte(v.Input), v.Signature); v.Input != v.Body && !errors.Is(err, webhook.ErrInvalidSignature) {
				t.Errorf("Verify(unnormalized input) = %v, want ErrInvalidSignature", err)
			}
		})
	}
}

func TestVerifyRejects(t *testing.T) {
	const key = "k3y-that-must-never-leak-Ω"
	body := []byte(`{"run_id":"wr_1"}`)
	good := webhook.Sign(key, body)
	tests := []struct {
		name, sig string
		want      error
	}{
		{"empty", "", webhook.ErrMissingSignature},
		{"blank", " \t ", webhook.ErrMissingSignature},
		{"not hex", strings.Repeat("zz", 32), webhook.ErrInvalidSignature},
		{"odd length", good[:63], webhook.ErrInvalidSignature},
		{"short", good[:62], webhook.ErrInvalidSignature},
		{"long", good + "00", webhook.ErrInvalidSignature},
		{"prefixed", "sha256=" + good, webhook.ErrInvalidSignature},
		{"last digit changed", good[:63] + string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", good[63])+1)%16]), webhook.ErrInvalidSignature},
		{"signature of other body", webhook.Sign(key, []byte(`{"run_id":"wr_2"}`)), webhook.ErrInvalidSignature},
	}
	for _, tc := range tests {
		err := webhook.Verify(key, body, tc.sig)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: Verify = %v, want %v", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), key) {
			t.Errorf("%s: error text %q contains the key", tc.name, err)
		}
	}
	if err := webhook.Verify("", body, webhook.Sign("", body)); !errors.Is(err, webhook.ErrEmptyKey) {
		t.Errorf("Verify with an empty key = %v, want ErrEmptyKey", err)
	}
}

func TestSignKnownAnswer(t *testing.T) {
	// RFC 4231 test case 2: HMAC-SHA256 with key "Jefe".
	got := webhook.Sign("Jefe", []byte("what do ya want for nothing?"))
	if want := "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"; got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
}
