package webhook

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// The expected strings are what CPython 3 writes for
// json.dumps(v, separators=(",", ":"), ensure_ascii=False) after the hosted
// service's integral-float-to-int rule, worked out once and written down
// here so the tests do not need Python.
var floatTable = []struct {
	in   float64
	want string
}{
	{1e23, "99999999999999991611392"},
	{5e-324, "5e-324"},
	{1.7976931348623157e308, "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368"},
	{math.Copysign(0, -1), "0"},
	{0, "0"},
	{0.0001, "0.0001"},
	{1e16, "10000000000000000"},
	{123456789012345.6, "123456789012345.6"},
	{0.1, "0.1"},
	{1e-05, "1e-05"},
	{2.5e-07, "2.5e-07"},
	{123456789.123, "123456789.123"},
	{3.0, "3"},
	{-2.0, "-2"},
	{1e20, "100000000000000000000"},
	{1e21, "1000000000000000000000"},
	{1e22, "10000000000000000000000"},
	{0.00001234, "1.234e-05"},
	{1234567890123456.7, "1234567890123456.8"},
	{-1.5e-10, "-1.5e-10"},
	{0.5, "0.5"},
	{-0.5, "-0.5"},
	{4.35, "4.35"},
	{100.5, "100.5"},
	{9007199254740993.0, "9007199254740992"},
	{0.001, "0.001"},
	{1.0001, "1.0001"},
	{3.141592653589793, "3.141592653589793"},
	{1e15, "1000000000000000"},
	{999999999999999.9, "999999999999999.9"},
	{9999999999999998.0, "9999999999999998"},
	{0.30000000000000004, "0.30000000000000004"},
	{1e-07, "1e-07"},
	{-1e-300, "-1e-300"},
	{2.2250738585072014e-308, "2.2250738585072014e-308"},
	{1e300, "1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160"},
	{6.02214076e23, "602214075999999987023872"},
	{1.5e16, "15000000000000000"},
	{0.000123456789, "0.000123456789"},
	{12.345678, "12.345678"},
	{-0.0001, "-0.0001"},
	{-9.223372036854776e18, "-9223372036854775808"}, // -2^63: the first value past the int64 fast path's strict bound
	{9.223372036854776e18, "9223372036854775808"},
}

func TestAppendFloat(t *testing.T) {
	for _, tc := range floatTable {
		if got := string(appendFloat(nil, tc.in)); got != tc.want {
			t.Errorf("appendFloat(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestAppendFloatViaNormalize runs the same table through the public entry
// point, spelling each value as Go does with 'e' and as a fraction, so the
// float path (not the integer-literal path) is taken.
func TestAppendFloatViaNormalize(t *testing.T) {
	for _, tc := range floatTable {
		lit := strconv.FormatFloat(tc.in, 'e', -1, 64)
		got, err := Normalize([]byte(lit))
		if err != nil {
			t.Fatalf("Normalize(%s): %v", lit, err)
		}
		if string(got) != tc.want {
			t.Errorf("Normalize(%s) = %s, want %s", lit, got, tc.want)
		}
	}
}

// TestAppendReprFixedIntegral covers the branch of appendRepr that only an
// integral value reaches (appendFloat sends those elsewhere): Python's repr
// writes them with a trailing ".0".
func TestAppendReprFixedIntegral(t *testing.T) {
	for in, want := range map[float64]string{1e15: "1000000000000000.0", 1: "1.0", -120: "-120.0", 0.5: "0.5"} {
		if got := string(appendRepr(nil, in)); got != want {
			t.Errorf("appendRepr(%v) = %s, want %s", in, got, want)
		}
	}
}

// TestAppendExactIntMatchesBig checks the exact-integer path against
// math/big over integral floats of every magnitude, including both sides of
// the int64 fast path.
func TestAppendExactIntMatchesBig(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		f := math.Float64frombits(r.Uint64())
		if math.IsInf(f, 0) || math.IsNaN(f) {
			continue
		}
		f = math.Trunc(f)
		want := "0"
		if f != 0 {
			n, _ := new(big.Float).SetFloat64(f).Int(nil)
			want = n.String()
		}
		if got := string(appendExactInt(nil, f)); got != want {
			t.Fatalf("appendExactInt(%v) = %s, want %s", f, got, want)
		}
	}
}

// TestAppendReprRoundTrips checks, for random non-integral floats, that the
// output reads back as the same float, has as many significant digits as
// Go's shortest form, and uses the notation Python picks for its exponent.
func TestAppendReprRoundTrips(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		f := math.Float64frombits(r.Uint64())
		if math.IsInf(f, 0) || math.IsNaN(f) || f == math.Trunc(f) {
			continue
		}
		got := string(appendRepr(nil, f))
		back, err := strconv.ParseFloat(got, 64)
		if err != nil || back != f {
			t.Fatalf("appendRepr(%v) = %s, reads back as %v (%v)", f, got, back, err)
		}
		short := strconv.FormatFloat(f, 'e', -1, 64)
		exp, _ := strconv.Atoi(short[strings.IndexByte(short, 'e')+1:])
		if fixed := exp >= -4 && exp < 16; fixed == strings.Contains(got, "e") {
			t.Fatalf("appendRepr(%v) = %s: wrong notation for exponent %d", f, got, exp)
		}
		if sig(got) != sig(short) {
			t.Fatalf("appendRepr(%v) = %s: digits differ from shortest %s", f, got, short)
		}
	}
}

// sig returns the significant digits of a decimal number.
func sig(s string) string {
	if i := strings.IndexByte(s, 'e'); i >= 0 {
		s = s[:i]
	}
	s = strings.NewReplacer("-", "", ".", "").Replace(s)
	return strings.TrimRight(strings.TrimLeft(s, "0"), "0")
}

func TestNormalizeTable(t *testing.T) {
	tests := []struct{ in, want string }{
		// Whitespace, -0 and float spellings.
		{`  { "a" : [ 1 , 2.50 , -0 , -0.0 , 1E2 , 1e-7 ] , "b" : { } , "c" : [ ] }  `, `{"a":[1,2.5,0,0,100,1e-07],"b":{},"c":[]}`},
		{`[1.0e+2,1E-2,0.000,10.5e1,-1e-400]`, `[100,0.01,0,105,0]`},
		{`123456789012345678901234567890`, `123456789012345678901234567890`},
		{`-123456789012345678901234567890.0`, `-123456789012345677877719597056`},
		{`-0`, `0`},
		{`-0e5`, `0`},
		// Overflowing literals are kept (Python would write Infinity).
		{`[1e400,-1E+999,1.8e308]`, `[1e400,-1E+999,1.8e308]`},
		// Escapes: controls lowercase, DEL and U+2028/9 and HTML raw, \/ unescaped.
		{`{"s":"\u0000\u001F\u007F\u0080\u00e9\b\f\n\r\t\/\\\"\u2028\u2029<>&"}`, "{\"s\":\"\\u0000\\u001f\x7f\u0080é\\b\\f\\n\\r\\t/\\\\\\\"\u2028\u2029<>&\"}"},
		{`"\u0008\u000C\u000a\u000d\u0009\u0022\u005c\u002F\u0041"`, `"\b\f\n\r\t\"\\/A"`},
		{`["\ud83d\ude80","\uD83D\uDE80","🚀"]`, `["🚀","🚀","🚀"]`},
		{`{"k\u00e9y":"v\n"}`, `{"kéy":"v\n"}`},
		// Raw characters Go's encoder would escape stay raw.
		{"\"\u2028<&>\x7f\"", "\"\u2028<&>\x7f\""},
		// Unpaired surrogates and invalid UTF-8 become U+FFFD, as encoding/json decodes them.
		{`"\ud800"`, "\"\uFFFD\""},
		{`"\udc00x"`, "\"\uFFFDx\""},
		{`"\ud800\u0041"`, "\"\uFFFDA\""},
		{`"\ud800\ud800\udc00"`, "\"\uFFFD\U00010000\""},
		{`"\ud800\n"`, "\"\uFFFD\\n\""},
		{"\"a\xffb\xed\xa0\x80c\"", "\"a\uFFFDb\uFFFD\uFFFD\uFFFDc\""},
		{"\"\xe2\x82\"", "\"\uFFFD\uFFFD\""},
		// Repeated keys are kept, in order.
		{`{"a":1,"b":2,"a":3}`, `{"a":1,"b":2,"a":3}`},
		{`true`, `true`},
		{` null `, `null`},
		{"\t\"x\"\r\n", `"x"`},
		{`[[[[]]],{}]`, `[[[[]]],{}]`},
	}
	for _, tc := range tests {
		got, err := Normalize([]byte(tc.in))
		if err != nil {
			t.Errorf("Normalize(%q): %v", tc.in, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("Normalize(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
		again, err := Normalize(got)
		if err != nil || string(again) != string(got) {
			t.Errorf("Normalize is not idempotent on %q: %q, %v", got, again, err)
		}
	}
}

func TestNormalizeErrors(t *testing.T) {
	tests := []struct {
		in     string
		offset int64
		msg    string
	}{
		{``, 0, "unexpected end"},
		{`   `, 3, "unexpected end"},
		{`{"a":}`, 5, "looking for beginning of value"},
		{`[1,]`, 3, "looking for beginning of value"},
		{`{"a":1,}`, 7, "object key"},
		{`{,}`, 1, "object key"},
		{`{"a" 1}`, 5, "after object key"},
		{`{"a":1 "b":2}`, 7, "after object key:value pair"},
		{`[1 2]`, 3, "after array element"},
		{`{} x`, 3, "after top-level value"},
		{`01`, 1, "after top-level value"},
		{`"abc`, 4, "unexpected end"},
		{`tru`, 3, "unexpected end"},
		{`trUe`, 2, "in literal"},
		{`nul1`, 3, "in literal"},
		{`-`, 1, "unexpected end"},
		{`-a`, 1, "in numeric literal"},
		{`1.`, 2, "unexpected end"},
		{`1.e3`, 2, "after decimal point"},
		{`1e`, 2, "unexpected end"},
		{`1e+x`, 3, "in exponent"},
		{`.5`, 0, "looking for beginning of value"},
		{`NaN`, 0, "looking for beginning of value"},
		{`'x'`, 0, `'\''`},
		{`{"a":1"b"}`, 6, `'"' after object key:value pair`},
		{`{"a":1`, 6, "unexpected end"},
		{`{"a"`, 4, "unexpected end"},
		{`[1,`, 3, "unexpected end"},
		{`"a` + "\n" + `b"`, 2, "in string literal"},
		{`"\x"`, 2, "in string escape code"},
		{`"\u12G4"`, 5, `\u hexadecimal`},
		{`"\u12`, 5, "unexpected end"},
		{"\"\\", 2, "unexpected end"},
		{"\xef\xbb\xbf{}", 0, "looking for beginning of value"},
		{strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1), maxDepth, "nesting depth"},
	}
	for _, tc := range tests {
		out, err := Normalize([]byte(tc.in))
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Normalize(%.40q) = %q, %v; want a *SyntaxError", tc.in, out, err)
			continue
		}
		if se.Offset != tc.offset || !strings.Contains(se.Error(), tc.msg) || !strings.Contains(se.Error(), "byte offset "+strconv.FormatInt(tc.offset, 10)) {
			t.Errorf("Normalize(%.40q): %v; want offset %d and %q", tc.in, err, tc.offset, tc.msg)
		}
		if json.Valid([]byte(tc.in)) {
			t.Errorf("test case %.40q is valid for encoding/json; Normalize must accept it", tc.in)
		}
	}
}

// TestNormalizeDepthLimit checks the boundary of the nesting limit, which
// must be that of encoding/json so both accept the same texts.
func TestNormalizeDepthLimit(t *testing.T) {
	for _, depth := range []int{maxDepth - 1, maxDepth, maxDepth + 1} {
		for _, open := range []string{"[", `{"k":`} {
			close := "]"
			if open != "[" {
				close = "}"
			}
			in := []byte(strings.Repeat(open, depth) + "1" + strings.Repeat(close, depth))
			_, err := Normalize(in)
			if valid := json.Valid(in); valid != (err == nil) {
				t.Errorf("depth %d of %s: json.Valid = %v, Normalize error = %v", depth, open, valid, err)
			}
		}
	}
}
