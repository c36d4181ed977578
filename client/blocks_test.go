package client

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// sampleBlocks returns one block of every known type, each with at least
// one of its own fields set (RawMessage values are compact, as the encoder
// writes them, so that decoding gives the same bytes back).
func sampleBlocks() []Block {
	return []Block{
		&NavigationBlock{
			BlockBase: BlockBase{
				Label: "Fill_Form", NextBlockLabel: "Extract", ContinueOnFailure: true,
				Model: Model{"name": "gpt-4.1"}, IgnoreWorkflowSystemPrompt: true,
			},
			NavigationGoal: "Fill the form with {{email}}", URL: "{{website_url}}", Title: "Fill",
			Engine: EngineSkyvernV1, ErrorCodeMapping: map[string]string{"NO_FORM": "no form on the page"},
			MaxRetries: 2, MaxStepsPerRun: new(0), ParameterKeys: []string{"email", "website_url"},
			CompleteOnDownload: true, DownloadSuffix: "form.pdf", TOTPVerificationURL: "https://example.com/totp",
			TOTPIdentifier: "ops@example.com", DisableCache: true, CompleteCriterion: "thanks shown",
			TerminateCriterion: "captcha", CompleteVerification: new(false),
			IncludeActionHistoryInVerification: true, CompleteCriterionIsUntrusted: true,
		},
		&ExtractionBlock{
			BlockBase:          BlockBase{Label: "Extract"},
			DataExtractionGoal: "Extract the email", DataSchema: json.RawMessage(`{"type":"object","properties":{"email":{"type":"string"}}}`),
			Engine: EngineSkyvernV2, MaxStepsPerRun: new(5),
		},
		&TaskBlock{
			BlockBase: BlockBase{Label: "Task"},
			URL:       "https://example.com", NavigationGoal: "go", DataExtractionGoal: "get",
			DataSchema: json.RawMessage(`["a","b"]`), Prompt: "do the thing", CompleteVerification: new(true),
		},
		&ValidationBlock{
			BlockBase:         BlockBase{Label: "Validate"},
			CompleteCriterion: "the order is placed", TerminateCriterion: "out of stock",
			ErrorCodeMapping: map[string]string{"OOS": "out of stock"}, WithoutPageInformation: true,
			Engine: EngineSkyvernV1, MaxStepsPerRun: new(3),
		},
		&TaskV2Block{
			BlockBase: BlockBase{Label: "V2"},
			Prompt:    "Find the cheapest flight", URL: "https://example.com", MaxIterations: 10, MaxSteps: 20,
		},
		&ForLoopBlock{
			BlockBase: BlockBase{Label: "Loop"},
			LoopBlocks: Blocks{
				&GotoURLBlock{BlockBase: BlockBase{Label: "Open", NextLoopOnFailure: true}, URL: "{{item}}"},
				&WaitBlock{BlockBase: BlockBase{Label: "Pause"}, WaitSec: 3},
			},
			LoopOverParameterKey: "urls", LoopVariableReference: "item", CompleteIfEmpty: true,
			DataSchema: json.RawMessage(`"free text"`),
		},
		&WhileLoopBlock{
			BlockBase:  BlockBase{Label: "While"},
			LoopBlocks: Blocks{&TextPromptBlock{BlockBase: BlockBase{Label: "Think"}, Prompt: "again?"}},
			Condition:  BranchCriteria{CriteriaType: "prompt", Expression: "there is a next page", Description: "paging"},
		},
		&ConditionalBlock{
			BlockBase: BlockBase{Label: "Branch"},
			BranchConditions: []BranchCondition{
				{Criteria: json.RawMessage(`{"criteria_type":"jinja2_template","expression":"{{ x }}"}`), NextBlockLabel: "Fill_Form", Description: "x set"},
				{IsDefault: true},
			},
		},
		&CodeBlock{
			BlockBase: BlockBase{Label: "Code"},
			Code:      "result = 1 + 1", ParameterKeys: []string{"a"}, ErrorCodeMapping: map[string]string{"E": "e"},
			Prompt: "add", Steps: []CodeBlockStep{{Title: "add", Description: "adds", ActionType: "null_action", LineStart: new(1), LineEnd: new(1)}},
		},
		&TextPromptBlock{
			BlockBase: BlockBase{Label: "Prompt"},
			Prompt:    "Summarize {{x}}", LLMKey: "GPT4", ParameterKeys: []string{"x"}, JSONSchema: json.RawMessage(`{"type":"string"}`),
		},
		&DownloadToS3Block{BlockBase: BlockBase{Label: "Download"}, URL: "https://example.com/a.pdf"},
		&UploadToS3Block{BlockBase: BlockBase{Label: "Upload"}, Path: "/tmp/out"},
		&FileUploadBlock{
			BlockBase:   BlockBase{Label: "FileUpload"},
			StorageType: "sftp", S3Bucket: "b", AWSAccessKeyID: "AKIA", AWSSecretAccessKey: "s", RegionName: "eu-west-1",
			AzureStorageAccountName: "acc", AzureStorageAccountKey: "k", AzureBlobContainerName: "c", AzureFolderPath: "f",
			GoogleCredentialID: "g", GoogleDriveFolderID: "d", SFTPHost: "h", SFTPPort: new(22), SFTPUsername: "u",
			SFTPPassword: "p", SFTPPrivateKey: "pk", SFTPPrivateKeyPassphrase: "pp", SFTPRemotePath: "/in", SFTPHostKey: "hk",
			Prompt: "only PDFs", Path: "/downloads",
		},
		&SendEmailBlock{
			BlockBase: BlockBase{Label: "Email"},
			Sender:    "a@example.com", Recipients: []string{"b@example.com"}, Subject: "s", Body: "b",
			FileAttachments: []string{"/tmp/a.pdf"}, SMTPHostSecretParameterKey: "h", SMTPPortSecretParameterKey: "p",
			SMTPUsernameSecretParameterKey: "u", SMTPPasswordSecretParameterKey: "pw", CustomSMTPHost: "smtp.example.com",
			CustomSMTPPort: 587, CustomSMTPUsername: "cu", CustomSMTPPassword: "cp",
		},
		&FileURLParserBlock{BlockBase: BlockBase{Label: "Parse"}, FileURL: "https://example.com/a.csv", FileType: "csv", JSONSchema: json.RawMessage(`{}`)},
		&PDFParserBlock{BlockBase: BlockBase{Label: "PDF"}, FileURL: "https://example.com/a.pdf", JSONSchema: json.RawMessage(`{"type":"object"}`)},
		&ActionBlock{
			BlockBase: BlockBase{Label: "Click"},
			URL:       "https://example.com", NavigationGoal: "click buy", Selector: "#buy", AIFallback: "proactive",
			MaxRetries: 1, MaxStepsPerRun: new(2),
		},
		&LoginBlock{
			BlockBase: BlockBase{Label: "Login"},
			URL:       "https://example.com/login", ParameterKeys: []string{"cred"}, CompleteVerification: new(false),
			SkipSavedProfile: true, IncludeActionHistoryInVerification: true,
		},
		&WaitBlock{BlockBase: BlockBase{Label: "Wait"}, WaitSec: 30},
		&HumanInteractionBlock{
			BlockBase:  BlockBase{Label: "Approve"},
			Recipients: []string{"boss@example.com"}, Instructions: "check it", PositiveDescriptor: "Yes",
			NegativeDescriptor: "No", TimeoutSeconds: 600, Sender: "bot@example.com", Subject: "please", Body: "look",
		},
		&FileDownloadBlock{
			BlockBase:      BlockBase{Label: "GetFile"},
			NavigationGoal: "download the invoice", DownloadTimeout: new(12.5), DownloadTarget: "s3",
			S3Bucket: "invoices", SFTPPort: new(2222), Path: "inv/", Prompt: "pdf only", ContinueOnEmpty: true,
		},
		&GotoURLBlock{BlockBase: BlockBase{Label: "Go"}, URL: "https://example.com/next"},
		&HTTPRequestBlock{
			BlockBase: BlockBase{Label: "Call"},
			Method:    "POST", URL: "https://api.example.com/x", Headers: json.RawMessage(`{"X-Key":"{{key}}"}`),
			Body: json.RawMessage(`{"b":2,"a":1}`), Files: json.RawMessage(`{"f":"/tmp/a"}`), Timeout: 5,
			FollowRedirects: new(false), DownloadFilename: "r.json", SaveResponseAsFile: true,
			SecretResponsePaths: []string{"token"}, ParameterKeys: []string{"key"},
		},
		&PrintPageBlock{
			BlockBase:        BlockBase{Label: "Print"},
			IncludeTimestamp: new(false), CustomFilename: "page", Format: "Letter", Landscape: true, PrintBackground: new(false),
		},
		&WorkflowTriggerBlock{
			BlockBase:           BlockBase{Label: "Child"},
			WorkflowPermanentID: "wpid_1", Payload: json.RawMessage(`{"n":1}`), WaitForCompletion: new(false),
			BrowserSessionID: "pbs_1", UseParentBrowserSession: true,
		},
		&GoogleSheetsReadBlock{
			BlockBase:      BlockBase{Label: "ReadSheet"},
			SpreadsheetURL: "https://docs.google.com/s/1", SheetName: "S", Range: "A1:B2", CredentialID: "cred_1", HasHeaderRow: new(false),
		},
		&GoogleSheetsWriteBlock{
			BlockBase:      BlockBase{Label: "WriteSheet"},
			SpreadsheetURL: "https://docs.google.com/s/1", WriteMode: "update", Values: "{{rows}}",
			ColumnMapping: json.RawMessage(`{"a":"A"}`), CreateSheetIfMissing: true,
		},
		&PDFFillBlock{BlockBase: BlockBase{Label: "Fill"}, FileURL: "https://example.com/f.pdf", Prompt: "fill it", Payload: json.RawMessage(`[1,2]`), LLMKey: "k"},
		&SplitPDFBlock{BlockBase: BlockBase{Label: "Split"}, FileURL: "https://example.com/f.pdf", Prompt: "split by invoice", LLMKey: "k"},
		&EmailInboxBlock{
			BlockBase:   BlockBase{Label: "Inbox"},
			EmailClient: "gmail", CredentialID: "cred_2", Folder: "INBOX", Prompt: "find the code", Sender: "x@example.com",
			Subject: "code", NewerThanDays: new(0), MaxResults: 5, IncludeBody: new(false),
		},
	}
}

func TestBlockTypesAllHaveStructs(t *testing.T) {
	seen := map[BlockType]bool{}
	for _, b := range sampleBlocks() {
		seen[b.BlockType()] = true
	}
	if len(BlockTypes) != 30 {
		t.Errorf("len(BlockTypes) = %d, want 30", len(BlockTypes))
	}
	for _, bt := range BlockTypes {
		if !bt.IsKnown() {
			t.Errorf("%s: IsKnown = false", bt)
		}
		nb := newBlock(bt)
		if nb == nil || nb.BlockType() != bt {
			t.Errorf("newBlock(%s) = %T", bt, nb)
		}
		if !seen[bt] {
			t.Errorf("sampleBlocks has no %s block", bt)
		}
	}
	if BlockType("web_search").IsKnown() {
		t.Error("web_search reported as known")
	}
}

func TestBlockRoundTripEveryType(t *testing.T) {
	for _, b := range sampleBlocks() {
		t.Run(string(b.BlockType()), func(t *testing.T) {
			data, err := json.Marshal(Blocks{b})
			if err != nil {
				t.Fatal(err)
			}
			var got Blocks
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatalf("decode %s: %v", data, err)
			}
			if len(got) != 1 {
				t.Fatalf("got %d blocks", len(got))
			}
			if reflect.TypeOf(got[0]) != reflect.TypeOf(b) {
				t.Fatalf("decoded as %T, want %T", got[0], b)
			}
			if !reflect.DeepEqual(got[0], b) {
				t.Errorf("round trip changed the block\n got: %#v\nwant: %#v\njson: %s", got[0], b, data)
			}
		})
	}
}

func TestBlockTypeWrittenFirst(t *testing.T) {
	for _, b := range sampleBlocks() {
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("%s: %v", b.BlockType(), err)
		}
		want := `{"block_type":"` + string(b.BlockType()) + `","label":`
		if !bytes.HasPrefix(data, []byte(want)) {
			t.Errorf("%s: encoding starts %.60s, want %s", b.BlockType(), data, want)
		}
	}
	// A value (not a pointer) encodes the same way.
	data, err := json.Marshal(WaitBlock{BlockBase: BlockBase{Label: "w"}, WaitSec: 1})
	if err != nil || string(data) != `{"block_type":"wait","label":"w","wait_sec":1}` {
		t.Errorf("value encoding = %s, %v", data, err)
	}
}

func TestBlockEncodingOmitsUnsetFields(t *testing.T) {
	// Only the required fields of a minimal block are sent, so the service
	// applies its defaults; the response-only fields stay out too.
	cases := []struct {
		b    Block
		want string
	}{
		{&NavigationBlock{BlockBase: BlockBase{Label: "n"}, NavigationGoal: "g"},
			`{"block_type":"navigation","label":"n","navigation_goal":"g"}`},
		{&ForLoopBlock{BlockBase: BlockBase{Label: "l"}},
			`{"block_type":"for_loop","label":"l","loop_blocks":[]}`},
		{&WhileLoopBlock{BlockBase: BlockBase{Label: "w"}, Condition: BranchCriteria{Expression: "{{ go }}"}},
			`{"block_type":"while_loop","label":"w","loop_blocks":[],"condition":{"expression":"{{ go }}"}}`},
		{&SendEmailBlock{BlockBase: BlockBase{Label: "e"}, Sender: "a", Recipients: []string{"b"}, Subject: "s", Body: "b"},
			`{"block_type":"send_email","label":"e","sender":"a","recipients":["b"],"subject":"s","body":"b"}`},
		{&PrintPageBlock{BlockBase: BlockBase{Label: "p"}},
			`{"block_type":"print_page","label":"p"}`},
	}
	for _, c := range cases {
		data, err := json.Marshal(c.b)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.b.BlockType(), data, c.want)
		}
	}
}

func TestBlockDefaultTrueBoolsAreSentWhenFalse(t *testing.T) {
	b := &HTTPRequestBlock{BlockBase: BlockBase{Label: "h"}, FollowRedirects: new(false)}
	data, _ := json.Marshal(b)
	if !bytes.Contains(data, []byte(`"follow_redirects":false`)) {
		t.Errorf("follow_redirects false not sent: %s", data)
	}
}

func TestUnknownBlockRoundTrip(t *testing.T) {
	in := `[{"label":"Search","block_type":"web_search","query":"q {{x}}","num_results":10,` +
		`"schema":{"type":"object","properties":{"a":{"type":["string","null"]}},"x":[1,2.5,{"deep":[null,true]}]},` +
		`"weights":[1e-05,12345678901234567890],"flags":null,"next_block_label":"Other","continue_on_failure":true}]`
	var bs Blocks
	if err := json.Unmarshal([]byte(in), &bs); err != nil {
		t.Fatal(err)
	}
	u, ok := bs[0].(*UnknownBlock)
	if !ok {
		t.Fatalf("decoded as %T", bs[0])
	}
	if u.Type != "web_search" || u.BlockType() != "web_search" {
		t.Errorf("Type = %q", u.Type)
	}
	if base := u.Base(); base.Label != "Search" || base.NextBlockLabel != "Other" || !base.ContinueOnFailure {
		t.Errorf("Base() = %+v", base)
	}
	out, err := json.Marshal(bs)
	if err != nil {
		t.Fatal(err)
	}
	// Same keys, same values, same number spellings: compare as decoded
	// values and, with UseNumber, as number literals.
	if !jsonEqual(t, []byte(in), out) {
		t.Errorf("meaning changed\n in: %s\nout: %s", in, out)
	}
	if !bytes.Contains(out, []byte("12345678901234567890")) || !bytes.Contains(out, []byte("1e-05")) {
		t.Errorf("number literals rewritten: %s", out)
	}
	// Raw is written as it came, key order included.
	if string(out) != in {
		t.Errorf("bytes changed\n in: %s\nout: %s", in, out)
	}
}

func TestUnknownBlockBuiltByHand(t *testing.T) {
	data, err := json.Marshal(Blocks{&UnknownBlock{Type: "terminate"}})
	if err != nil || string(data) != `[{"block_type":"terminate"}]` {
		t.Errorf("got %s, %v", data, err)
	}
	if _, err := json.Marshal(Blocks{&UnknownBlock{}}); err == nil {
		t.Error("empty UnknownBlock encoded without error")
	}
}

func TestBlocksNestedLoopRoundTrip(t *testing.T) {
	in := Blocks{
		&ForLoopBlock{
			BlockBase:            BlockBase{Label: "Outer"},
			LoopOverParameterKey: "rows",
			LoopBlocks: Blocks{
				&WhileLoopBlock{
					BlockBase:  BlockBase{Label: "Inner"},
					Condition:  BranchCriteria{Expression: "{{ more }}"},
					LoopBlocks: Blocks{&WaitBlock{BlockBase: BlockBase{Label: "Nap", NextLoopOnFailure: true}, WaitSec: 1}},
				},
				&UnknownBlock{Type: "terminate", Raw: json.RawMessage(`{"block_type":"terminate","label":"Stop","reason":"done"}`)},
			},
		},
	}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var got Blocks
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	// The decoded UnknownBlock also has its common fields decoded; compare
	// it separately.
	outer := got[0].(*ForLoopBlock)
	u := outer.LoopBlocks[1].(*UnknownBlock)
	if u.Base().Label != "Stop" || string(u.Raw) != `{"block_type":"terminate","label":"Stop","reason":"done"}` {
		t.Errorf("nested unknown block = %+v %s", u.Base(), u.Raw)
	}
	outer.LoopBlocks[1] = in[0].(*ForLoopBlock).LoopBlocks[1]
	if !reflect.DeepEqual(got, in) {
		t.Errorf("nested round trip changed\n got %s", data)
	}
}

func TestBlocksDecodeErrors(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string
	}{
		{"wrong field type", `[{"block_type":"wait","label":"a"},{"block_type":"wait","label":"b"},{"block_type":"goto_url","label":"c","url":"u"},` +
			`{"block_type":"navigation","label":"Fill_form","navigation_goal":42}]`,
			[]string{`blocks[3] (navigation "Fill_form"): `, "navigation_goal"}},
		{"label not a string", `[{"block_type":"wait","label":7,"wait_sec":"x"}]`,
			[]string{`blocks[0] (wait): `}},
		{"missing block_type", `[{"block_type":"wait","label":"a"},{"label":"b"}]`,
			[]string{`blocks[1]: `, "block_type", "missing"}},
		{"block_type not a string", `[{"block_type":3,"label":"a"}]`,
			[]string{`blocks[0]: `, "block_type", "string", "3"}},
		{"block_type null", `[{"block_type":null,"label":"a"}]`,
			[]string{`blocks[0]: `, "block_type", "null"}},
		{"block_type empty", `[{"block_type":"","label":"a"}]`,
			[]string{`blocks[0]: `, "block_type", "empty"}},
		{"element not an object", `[{"block_type":"wait","label":"a"},"wait"]`,
			[]string{`blocks[1]: `}},
		{"not a list", `{"block_type":"wait"}`,
			[]string{"blocks: "}},
		{"nested", `[{"block_type":"for_loop","label":"Loop","loop_blocks":[{"block_type":"wait","label":"W"},{"block_type":"goto_url","label":"Go","url":false}]}]`,
			[]string{`blocks[0] (for_loop "Loop"): `, `blocks[1] (goto_url "Go"): `}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var bs Blocks
			err := json.Unmarshal([]byte(c.in), &bs)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestBlocksDecodeErrorInsideAgent(t *testing.T) {
	in := `{"title":"t","workflow_definition":{"parameters":[],"blocks":[{"block_type":"extraction","label":"Get","data_schema":{},"max_retries":"two"}]}}`
	var a Agent
	err := json.Unmarshal([]byte(in), &a)
	if err == nil || !strings.Contains(err.Error(), `blocks[0] (extraction "Get"): `) {
		t.Errorf("err = %v", err)
	}
}

func TestBlocksEncodeNilBlock(t *testing.T) {
	var nilNav *NavigationBlock
	for _, bs := range []Blocks{{&WaitBlock{BlockBase: BlockBase{Label: "w"}}, nil}, {&WaitBlock{}, nilNav}} {
		_, err := json.Marshal(bs)
		if err == nil || !strings.Contains(err.Error(), "blocks[1]: nil block") {
			t.Errorf("err = %v", err)
		}
	}
	_, err := json.Marshal(Blocks{&CodeBlock{BlockBase: BlockBase{Label: "bad"}, Code: "x", Steps: nil}, &HTTPRequestBlock{BlockBase: BlockBase{Label: "h"}, Body: json.RawMessage(`{oops`)}})
	if err == nil || !strings.Contains(err.Error(), `blocks[1] (http_request "h")`) {
		t.Errorf("err = %v", err)
	}
}

func TestBlocksNullAndEmpty(t *testing.T) {
	var bs Blocks = Blocks{&WaitBlock{}}
	if err := json.Unmarshal([]byte(`null`), &bs); err != nil || bs != nil {
		t.Errorf("null: %v %v", bs, err)
	}
	if err := json.Unmarshal([]byte(`[]`), &bs); err != nil || bs == nil || len(bs) != 0 {
		t.Errorf("[]: %#v %v", bs, err)
	}
	data, _ := json.Marshal(Blocks(nil))
	if string(data) != "[]" {
		t.Errorf("nil Blocks encodes as %s", data)
	}
}

func TestBlockBaseAccess(t *testing.T) {
	// Base gives write access to the common fields of any block.
	for _, b := range sampleBlocks() {
		b.Base().Label = "renamed_" + string(b.BlockType())
	}
	b := &SplitPDFBlock{BlockBase: BlockBase{Label: "x"}}
	var blk Block = b
	blk.Base().ContinueOnFailure = true
	if !b.ContinueOnFailure {
		t.Error("Base() does not point into the block")
	}
}

// jsonEqual reports whether a and b hold the same JSON value, numbers
// compared by their literal spelling.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	return reflect.DeepEqual(decodeAny(t, a), decodeAny(t, b))
}

func decodeAny(t testing.TB, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	return v
}

// blockSplitCases are block lists the hand splitter of Blocks.UnmarshalJSON
// must read exactly as encoding/json does.
var blockSplitCases = []string{
	`[]`,
	` [ ] `,
	"[\n {\"block_type\" : \"wait\" ,\t\"label\":\"a\"}\r\n]",
	`[{"label":"x]}\"{[","block_type":"wait"},{"block_type":"goto_url","label":"y","url":"a,b]"}]`,
	`[{"block_type":"wait","block_type":"goto_url","label":"dup","url":"u"}]`,
	`[{"block_type":"web_search","nested":{"a":[1,{"b":"}"}],"c":-1.5e3,"d":[true,false,null]},"label":"s"}]`,
	`[{"blo\u0063k_type":"wait","label":"escaped key"}]`,
	`[{"block_type":"w\u0061it","label":"escaped value"}]`,
	`[{"label":"\\","block_type":"wait"}]`,
}

func TestBlocksSplitMatchesEncodingJSON(t *testing.T) {
	for _, in := range blockSplitCases {
		var got Blocks
		if err := got.UnmarshalJSON([]byte(in)); err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		var raws []json.RawMessage
		if err := json.Unmarshal([]byte(in), &raws); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(raws) {
			t.Errorf("%s: %d blocks, encoding/json sees %d", in, len(got), len(raws))
			continue
		}
		for i, raw := range raws {
			var head struct {
				BlockType BlockType `json:"block_type"`
				Label     string    `json:"label"`
			}
			_ = json.Unmarshal(raw, &head)
			if got[i].BlockType() != head.BlockType || got[i].Base().Label != head.Label {
				t.Errorf("%s: blocks[%d] = %s %q, want %s %q", in, i, got[i].BlockType(), got[i].Base().Label, head.BlockType, head.Label)
			}
		}
	}
}

func TestBlocksUnmarshalInvalidJSON(t *testing.T) {
	// encoding/json validates before calling UnmarshalJSON; a direct call
	// with broken input must still fail cleanly.
	for _, in := range []string{
		`[`, `]`, `[,]`, `[{"block_type":"wait","label":"a"} x]`, `[{"block_type":"wait","label":"a"},]`,
		`[{"block_type":"wait","label":"a"}`, `[{"block_type":"wait","label":"a}]`, `[{"block_type":"wait" "label":"a"}]`,
		`[{"block_type":"zzz","a":tru}]`, `[{"block_type":"zzz","a":[}]]`, `[{"block_type":"wait","label":"a"}] []`,
		`{"block_type":"wait"}`, `"x"`,
	} {
		var bs Blocks
		if err := bs.UnmarshalJSON([]byte(in)); err == nil {
			t.Errorf("%q: no error, got %v", in, bs)
		}
	}
}

func FuzzBlocksUnmarshal(f *testing.F) {
	for _, c := range blockSplitCases {
		f.Add([]byte(c))
	}
	f.Add([]byte(`[{"block_type":"for_loop","label":"l","loop_blocks":[{"block_type":"zzz","label":"z"}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var bs Blocks
		err := bs.UnmarshalJSON(data)
		if err == nil && !json.Valid(data) && !isJSONNull(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		if err != nil {
			return
		}
		// What decoded encodes, and decodes again to the same types.
		out, err := json.Marshal(bs)
		if err != nil {
			return // e.g. a known type decoded from odd input may not re-encode identically; not a crash
		}
		var again Blocks
		if err := json.Unmarshal(out, &again); err != nil || len(again) != len(bs) {
			t.Fatalf("re-decode of %s: %v", out, err)
		}
	})
}
