package blocks

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
)

func TestParsePageRanges(t *testing.T) {
	for _, tc := range []struct {
		prompt string
		want   []pdfPart
	}{
		{"1-2, 3, 4-end", []pdfPart{{From: 1, Thru: 2}, {From: 3, Thru: 3}, {From: 4}}},
		{"invoice: 1-2; receipt = pages 3 to 4\nrest: 5-last", []pdfPart{{Name: "invoice", From: 1, Thru: 2}, {Name: "receipt", From: 3, Thru: 4}, {Name: "rest", From: 5}}},
		{"Pages 2–3", []pdfPart{{From: 2, Thru: 3}}},
	} {
		got, err := parsePageRanges(tc.prompt)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %v %v, want %v", tc.prompt, got, err, tc.want)
		}
	}
	for _, prompt := range []string{"", "one file per invoice", "1-2, and the rest", "invoice: the first two pages", "-3"} {
		if got, err := parsePageRanges(prompt); err == nil {
			t.Errorf("%q: %v, want an error", prompt, got)
		}
	}
}

func TestExplicitPayload(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"name": "Ada"}`:                   true,
		`"{{ extract_output }}"`:            true,
		`"{\"name\": \"Ada\"}"`:             true,
		`"Ada Lovelace wants the pro plan"`: false,
		`["Ada"]`:                           false,
		`null`:                              false,
		``:                                  false,
	} {
		if got := explicitPayload(json.RawMessage(raw)); got != want {
			t.Errorf("%s: %v, want %v", raw, got, want)
		}
	}
}

func TestFieldValue(t *testing.T) {
	text := &formField{Name: "amount", Type: "text"}
	box := &formField{Name: "agree", Type: "checkbox"}
	radio := &formField{Name: "plan", Type: "radio", Options: []string{"basic", "pro"}}
	list := &formField{Name: "days", Type: "listbox", Options: []string{"Mon", "Tue"}}
	locked := &formField{Name: "id", Type: "text", Locked: true}
	for _, tc := range []struct {
		f    *formField
		v    any
		want any
	}{
		{text, 12.5, "12.5"},
		{text, "x", "x"},
		{box, "Yes", true},
		{box, false, false},
		{box, float64(0), false},
		{radio, "PRO", "pro"},
		{list, []any{"tue", "Mon"}, []string{"Tue", "Mon"}},
		{list, "Mon", []string{"Mon"}},
	} {
		got, err := fieldValue(tc.f, tc.v)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %v: %#v %v, want %#v", tc.f.Name, tc.v, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		f    *formField
		v    any
		want string
	}{
		{text, map[string]any{"a": 1.0}, `the field "amount" takes a text, not {"a":1}`},
		{box, "maybe", `the checkbox "agree" takes true or false, not "maybe"`},
		{radio, "gold", `the field "plan" takes one of "basic", "pro", not "gold"`},
		{list, []any{"Sun"}, `the list box "days" takes options among "Mon", "Tue", not "Sun"`},
		{locked, "1", `the field "id" is read-only`},
	} {
		if _, err := fieldValue(tc.f, tc.v); err == nil || err.Error() != tc.want {
			t.Errorf("%s %v: %v, want %q", tc.f.Name, tc.v, err, tc.want)
		}
	}
}

func TestFindField(t *testing.T) {
	fields := []formField{{Name: "full_name", AltName: "Full name"}, {Name: "Email"}, {Name: "email2", AltName: "EMAIL"}}
	for key, want := range map[string]string{"full_name": "full_name", "Full name": "full_name", "FULL_NAME": "full_name", "Email": "Email", "email2": "email2", "nothing": ""} {
		got := ""
		if f := findField(key, fields); f != nil {
			got = f.Name
		}
		if got != want {
			t.Errorf("%q: %q, want %q", key, got, want)
		}
	}
	// "email" matches two fields without regard to case: none is chosen.
	if f := findField("email", fields); f != nil {
		t.Errorf("an ambiguous key found %q", f.Name)
	}
}

func TestCheckPDF(t *testing.T) {
	fill := func(payload string) client.Block {
		b := &client.PDFFillBlock{BlockBase: client.BlockBase{Label: "fill"}, FileURL: "form.pdf", Prompt: "Fill it."}
		if payload != "" {
			b.Payload = json.RawMessage(payload)
		}
		return b
	}
	split := func(prompt string) client.Block {
		return &client.SplitPDFBlock{BlockBase: client.BlockBase{Label: "split"}, FileURL: "bundle.pdf", Prompt: prompt}
	}
	for _, tc := range []struct {
		b        client.Block
		hasModel bool
		want     string
	}{
		{&client.PDFParserBlock{BlockBase: client.BlockBase{Label: "read"}}, false, `block "read" (pdf_parser) has no file_url`},
		{&client.PDFFillBlock{BlockBase: client.BlockBase{Label: "fill"}}, true, `block "fill" (pdf_fill) has no file_url`},
		{fill(`{"name": "Ada"}`), false, ""},
		{fill(`"{{ data }}"`), false, ""},
		{fill(`"Ada, pro plan"`), false, `block "fill" (pdf_fill) needs a language model`},
		{fill(``), false, `block "fill" (pdf_fill) needs a language model`},
		{fill(`"Ada, pro plan"`), true, ""},
		{split(""), true, `block "split" (split_pdf) has no prompt`},
		{split("1-2, 3-end"), false, ""},
		{split("{{ ranges }}"), false, ""},
		{split("one file per invoice"), false, `block "split" (split_pdf) needs a language model`},
	} {
		err := checkPDF(tc.b, tc.hasModel)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.b.Base().Label, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.b.Base().Label, err, tc.want)
		}
	}
}
