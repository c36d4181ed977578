package webhook_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/abctl/abctl/client/webhook"
)

func FuzzNormalize(f *testing.F) {
	for _, v := range loadVectors(f) {
		f.Add([]byte(v.Input))
		f.Add([]byte(v.Body))
	}
	for _, s := range []string{
		``, ` `, `0`, `-0`, `-0.0`, `1e400`, `1e-400`, `1e23`, `5e-324`, `[1.5e300,-2e-7]`,
		`"\ud800"`, `"\ud800\udc00"`, `"\ud800\u0041"`, "\"\xff\"", "\"\u2028\"", `"\u001f\u007f"`,
		`{"a":1,"a":2}`, `{"a":[{}],"b":{"c":[]}}`, `[`, `{"a"}`, `01`, `1.`, `nul`, `"\x"`,
		strings.Repeat("[", 100) + strings.Repeat("]", 100),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := webhook.Normalize(in)
		if !json.Valid(in) {
			var se *webhook.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Normalize(%q) = %q, %v; want a *SyntaxError for invalid JSON", in, out, err)
			}
			if se.Offset < 0 || se.Offset > int64(len(in)) {
				t.Fatalf("Normalize(%q): offset %d outside the input", in, se.Offset)
			}
			return
		}
		if err != nil {
			t.Fatalf("Normalize(%q) failed on valid JSON: %v", in, err)
		}
		again, err := webhook.Normalize(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: Normalize(%q) = %q, then %q, %v", in, out, again, err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, out); err != nil || !bytes.Equal(compact.Bytes(), out) {
			t.Fatalf("output %q is not compact JSON (%v)", out, err)
		}
		compareTokens(t, in, out)

		var a, b any
		if json.Unmarshal(in, &a) == nil {
			if err := json.Unmarshal(out, &b); err != nil {
				t.Fatalf("output %q of %q does not decode: %v", out, in, err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("decoded values differ:\n in %q -> %#v\nout %q -> %#v", in, a, out, b)
			}
		}
	})
}

// compareTokens walks both texts token by token: the structure, the object
// keys in their order, strings and literals must be identical, and numbers
// must follow the float->int rule.
func compareTokens(t *testing.T, in, out []byte) {
	t.Helper()
	di := json.NewDecoder(bytes.NewReader(in))
	do := json.NewDecoder(bytes.NewReader(out))
	di.UseNumber()
	do.UseNumber()
	for {
		ti, ei := di.Token()
		to, eo := do.Token()
		if ei == io.EOF && eo == io.EOF {
			return
		}
		if ei != nil || eo != nil {
			t.Fatalf("token streams of %q and %q: %v / %v", in, out, ei, eo)
		}
		ni, isNum := ti.(json.Number)
		if !isNum {
			if ti != to {
				t.Fatalf("token %#v of %q became %#v in %q", ti, in, to, out)
			}
			continue
		}
		no, ok := to.(json.Number)
		if !ok {
			t.Fatalf("number %s of %q became %#v in %q", ni, in, to, out)
		}
		checkNumber(t, string(ni), string(no))
	}
}

// checkNumber states the number rule independently of the implementation.
func checkNumber(t *testing.T, in, out string) {
	t.Helper()
	if !strings.ContainsAny(in, ".eE") {
		want := in
		if in == "-0" {
			want = "0"
		}
		if out != want {
			t.Fatalf("integer literal %s became %s, want %s", in, out, want)
		}
		return
	}
	f, err := strconv.ParseFloat(in, 64)
	if err != nil {
		if out != in {
			t.Fatalf("out-of-range literal %s became %s, want it kept", in, out)
		}
		return
	}
	if f == math.Trunc(f) {
		want := "0"
		if f != 0 {
			n, _ := new(big.Float).SetFloat64(f).Int(nil)
			want = n.String()
		}
		if out != want {
			t.Fatalf("integral float %s became %s, want %s", in, out, want)
		}
		return
	}
	g, err := strconv.ParseFloat(out, 64)
	if err != nil || g != f || !strings.ContainsAny(out, ".e") || strings.ContainsAny(out, "E+") {
		t.Fatalf("float %s became %s (reads back as %v, %v)", in, out, g, err)
	}
}
