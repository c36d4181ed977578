package blocks

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
)

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
