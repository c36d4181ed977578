// Package webhook signs, verifies, builds and receives the run-completion
// webhooks of the v1 API.
//
// When a run reaches a terminal status the service POSTs a JSON payload
// (see [Payload]) to the configured URL with three headers: Content-Type
// application/json, [SignatureHeader] and [TimestampHeader]. The signature is
// the lowercase hex HMAC-SHA256 of the exact body bytes, keyed with the API
// key of the organization that created the run. The timestamp is not signed.
//
// # Receivers: verify the raw bytes
//
// A receiver must compute the signature over the bytes it received, before
// any parsing. Decoding the body and encoding it again does not give the
// signed bytes back: Go's encoding/json sorts map keys, escapes U+2028,
// U+2029 and (by default) <, > and &, and writes 1e-05 as 0.00001, while the
// hosted service writes keys in insertion order, raw UTF-8 and Python's float
// repr. A re-serialized body therefore fails verification even when nothing
// was tampered with. [Verify] takes the raw body, and [Handler] reads it,
// verifies it and only then decodes it, handing the untouched bytes on to the
// wrapped handler.
//
// Deliveries can repeat: the webhook retry operation re-sends a payload,
// cancelling a finished workflow run sends its webhook again, and the hosted
// service's code retries attempts that failed or timed out even though its
// documentation says it does not. Receivers should treat run_id as an
// idempotency key and answer 2xx quickly.
//
// # Senders: sign exactly what is sent
//
// The hosted service builds the body with Python's
// json.dumps(separators=(",", ":"), ensure_ascii=False) after turning every
// float with an integral value into an int. [Normalize] rewrites any JSON text
// into that form, [Body] does the same for a Go value, and [NewRequest] signs
// and wraps the resulting bytes. A sender must sign the bytes it puts on the
// wire and nothing else; the signature of a body that is later reformatted
// (by a proxy, a logging middleware, a pretty-printer) is worthless.
package webhook
