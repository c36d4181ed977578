package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/internal/jsonobject"
	"github.com/abctl/abctl/internal/ptr"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func loadAgentResponse(t testing.TB) *Agent {
	t.Helper()
	a := new(Agent)
	if err := json.Unmarshal(readTestdata(t, "agent_response.json"), a); err != nil {
		t.Fatalf("decode agent_response.json: %v", err)
	}
	return a
}

func TestAgentDecodeResponse(t *testing.T) {
	a := loadAgentResponse(t)

	// Top level.
	if a.WorkflowID != "w_490440779503357001" || a.WorkflowPermanentID != "wpid_490440779503357000" ||
		a.AgentID != a.WorkflowPermanentID || a.OrganizationID != "o_485917350850524254" {
		t.Errorf("ids: %q %q %q %q", a.WorkflowID, a.WorkflowPermanentID, a.AgentID, a.OrganizationID)
	}
	if a.Title != "Contact Forms" || a.Version != 3 || a.IsSavedTask || a.IsTemplate {
		t.Errorf("title/version: %q %d %v %v", a.Title, a.Version, a.IsSavedTask, a.IsTemplate)
	}
	if ptr.Value(a.Description) != "Fill the contact form on the website" {
		t.Errorf("description = %v", a.Description)
	}
	if a.ProxyLocation == nil || a.ProxyLocation.Name != ProxyResidential {
		t.Errorf("proxy_location = %+v", a.ProxyLocation)
	}
	if ptr.Value(a.WebhookCallbackURL) != "https://example.com/webhook" || a.TOTPVerificationURL != nil || a.TOTPIdentifier != nil {
		t.Errorf("urls: %v %v %v", a.WebhookCallbackURL, a.TOTPVerificationURL, a.TOTPIdentifier)
	}
	if !a.MaskSecrets || a.AIFallback || a.EnableSelfHealing || a.RunSequentially != nil || a.CodeVersion != nil {
		t.Errorf("flags: mask=%v ai=%v heal=%v seq=%v code=%v", a.MaskSecrets, a.AIFallback, a.EnableSelfHealing, a.RunSequentially, a.CodeVersion)
	}
	if a.Model.Name() != "gpt-4.1" || a.Status != AgentStatusPublished || a.RunWith != "agent" || ptr.Value(a.CacheKey) != "default" {
		t.Errorf("model/status: %v %q %q %v", a.Model, a.Status, a.RunWith, a.CacheKey)
	}
	if a.MaxElapsedTimeMinutes == nil || *a.MaxElapsedTimeMinutes != 60 || a.MaxScreenshotScrolls != nil {
		t.Errorf("limits: %v %v", a.MaxElapsedTimeMinutes, a.MaxScreenshotScrolls)
	}
	if a.ExtraHTTPHeaders != nil || a.CDPConnectHeaders["Authorization"] != "***" {
		t.Errorf("headers: %v %v", a.ExtraHTTPHeaders, a.CDPConnectHeaders)
	}
	if ptr.Value(a.FolderID) != "fld_490440779503356000" || ptr.Value(a.EditedBy) != "user_42" || a.CreatedBy != nil || a.ImportError != nil {
		t.Errorf("folder/editor: %v %v %v %v", a.FolderID, a.EditedBy, a.CreatedBy, a.ImportError)
	}
	wantCreated := time.Date(2026, 1, 31, 15, 20, 42, 160725000, time.UTC)
	if !a.CreatedAt.Equal(wantCreated) || a.ModifiedAt.String() != "2026-01-31T15:21:02" || a.DeletedAt != nil {
		t.Errorf("times: %v %v %v", a.CreatedAt, a.ModifiedAt, a.DeletedAt)
	}

	// Definition: parameters.
	d := a.WorkflowDefinition
	if d.Version == nil || *d.Version != 2 || d.WorkflowSystemPrompt != "Be polite." || d.FinallyBlockLabel != "" || d.ErrorCodeMapping != nil {
		t.Errorf("definition header: %v %q %q %v", d.Version, d.WorkflowSystemPrompt, d.FinallyBlockLabel, d.ErrorCodeMapping)
	}
	if len(d.Parameters) != 18 {
		t.Fatalf("%d parameters, want 18", len(d.Parameters))
	}
	outputs := 0
	for _, p := range d.Parameters {
		if p.ParameterType == ParameterTypeOutput {
			outputs++
			if !strings.HasSuffix(p.Key, "_output") || !strings.HasPrefix(p.ID(), "op_") || p.WorkflowID == "" {
				t.Errorf("output parameter %+v", p)
			}
		}
	}
	if outputs != 9 {
		t.Errorf("%d output parameters, want 9 (one per block, nested ones included)", outputs)
	}
	website, email, companies := d.Parameters[0], d.Parameters[1], d.Parameters[2]
	if website.Key != "website_url" || website.WorkflowParameterType != WorkflowParameterString ||
		website.ID() != "wp_490440779503357101" || !isJSONNull(website.DefaultValue) || website.Description != "" {
		t.Errorf("website_url = %+v", website)
	}
	if string(email.DefaultValue) != `"sales@example.com"` || email.Description != "Where replies should go" {
		t.Errorf("email = %+v", email)
	}
	if string(companies.DefaultValue) != `[{"name": "Acme", "size": 120}, {"name": "Globex", "size": 7}]` ||
		companies.WorkflowParameterType != WorkflowParameterJSON || companies.ModifiedAt.String() != "2026-01-31T15:21:02" {
		t.Errorf("companies = %+v (default %s)", companies, companies.DefaultValue)
	}
	cred := d.Parameters[3]
	if cred.ParameterType != ParameterTypeCredential || cred.CredentialID != "cred_490440779503350001" || cred.ID() != "cp_490440779503357104" {
		t.Errorf("credential = %+v", cred)
	}
	ctx := d.Parameters[4]
	if ctx.ParameterType != ParameterTypeContext || ctx.Source == nil || ctx.Source.Key != "companies" ||
		ctx.SourceParameterKey != "" || !isJSONNull(ctx.Value) {
		t.Errorf("context = %+v", ctx)
	}
	if smtp := d.Parameters[5]; smtp.ParameterType != ParameterTypeAWSSecret || smtp.AWSKey != "SKYVERN_SMTP_HOST" || smtp.ID() != "asp_490440779503357105" {
		t.Errorf("aws secret = %+v", smtp)
	}

	// Blocks.
	if len(d.Blocks) != 7 {
		t.Fatalf("%d blocks, want 7", len(d.Blocks))
	}
	wantTypes := []BlockType{BlockTypeLogin, BlockTypeNavigation, BlockTypeExtraction, BlockTypeForLoop, "web_search", BlockTypeConditional, BlockTypeSendEmail}
	for i, b := range d.Blocks {
		if b.BlockType() != wantTypes[i] {
			t.Errorf("blocks[%d] type %s, want %s", i, b.BlockType(), wantTypes[i])
		}
		if op := b.Base().OutputParameter; op == nil || op.Key != b.Base().Label+"_output" || op.ParameterType != ParameterTypeOutput {
			t.Errorf("blocks[%d] output_parameter = %+v", i, op)
		}
	}
	login := d.Blocks[0].(*LoginBlock)
	if login.Label != "Log_In" || login.URL != "https://example.com/login" || login.MaxStepsPerRun == nil || *login.MaxStepsPerRun != 10 ||
		login.ErrorCodeMapping["BAD_PASSWORD"] == "" || !login.SkipSavedProfile || login.TOTPIdentifier != "ops@example.com" ||
		login.TaskType != "general" || login.IncludeExtractedText == nil || !*login.IncludeExtractedText ||
		login.CompleteVerification == nil || !*login.CompleteVerification || len(login.Parameters) != 1 || login.Parameters[0].Key != "login_credential" {
		t.Errorf("login = %+v", login)
	}
	nav := d.Blocks[1].(*NavigationBlock)
	if nav.Label != "Fill_Out_Contact_Form" || !nav.ContinueOnFailure || nav.Model.Name() != "gpt-4.1" || nav.URL != "{{website_url}}" ||
		nav.Engine != EngineSkyvernV1 || nav.MaxStepsPerRun != nil || nav.ParameterKeys != nil || len(nav.Parameters) != 2 ||
		nav.Parameters[1].Key != "email" || nav.NextBlockLabel != "" || !isJSONNull(nav.DataSchema) || nav.DownloadTimeout != nil {
		t.Errorf("navigation = %+v", nav)
	}
	ext := d.Blocks[2].(*ExtractionBlock)
	if ext.NextBlockLabel != "Each_Company" || ext.IncludeExtractedText == nil || *ext.IncludeExtractedText || !ext.DisableCache ||
		ext.MaxRetries != 2 || ext.URL != "" || ext.NavigationGoal != "" || len(ext.Parameters) != 0 ||
		!jsonEqual(t, ext.DataSchema, []byte(`{"type":"object","properties":{"email":{"type":"string","description":"A contact address"}},"required":["email"]}`)) {
		t.Errorf("extraction = %+v (schema %s)", ext, ext.DataSchema)
	}
	loop := d.Blocks[3].(*ForLoopBlock)
	if loop.LoopOver == nil || loop.LoopOver.Key != "companies" || loop.LoopOverParameterKey != "" || !loop.CompleteIfEmpty || len(loop.LoopBlocks) != 2 {
		t.Fatalf("for_loop = %+v", loop)
	}
	open := loop.LoopBlocks[0].(*GotoURLBlock)
	if open.URL != "https://example.com/companies/{{company_name}}" || !open.NextLoopOnFailure || open.OutputParameter.Key != "Open_Company_output" {
		t.Errorf("nested goto_url = %+v", open)
	}
	sum := loop.LoopBlocks[1].(*TextPromptBlock)
	if sum.Model.Name() != "gemini-2.5-flash" || !sum.IgnoreWorkflowSystemPrompt || len(sum.Parameters) != 2 ||
		sum.Parameters[0].Source == nil || sum.Parameters[1].ParameterType != ParameterTypeOutput || sum.LLMKey != "" {
		t.Errorf("nested text_prompt = %+v", sum)
	}
	web := d.Blocks[4].(*UnknownBlock)
	if web.Type != "web_search" || web.Base().Label != "Search_News" || !web.Base().ContinueOnFailure ||
		web.Base().OutputParameter == nil || len(web.Base().Parameters) != 1 {
		t.Errorf("unknown block = %+v", web.Base())
	}
	cond := d.Blocks[5].(*ConditionalBlock)
	if len(cond.BranchConditions) != 2 || cond.BranchConditions[0].ID != "b_0f9a2c" || cond.BranchConditions[0].NextBlockLabel != "Notify" ||
		!cond.BranchConditions[1].IsDefault || !isJSONNull(cond.BranchConditions[1].Criteria) {
		t.Errorf("conditional = %+v", cond)
	}
	var crit BranchCriteria
	if err := json.Unmarshal(cond.BranchConditions[0].Criteria, &crit); err != nil || crit.Expression != "{{ Extract_Email_output.email }}" || crit.CriteriaType != "jinja2_template" {
		t.Errorf("criteria = %+v, %v", crit, err)
	}
	mail := d.Blocks[6].(*SendEmailBlock)
	if mail.SMTPHost == nil || mail.SMTPHost.Key != "smtp_host" || mail.SMTPPassword.AWSKey != "SKYVERN_SMTP_PASSWORD" ||
		mail.SMTPHostSecretParameterKey != "" || len(mail.Recipients) != 2 || mail.FileAttachments == nil || len(mail.FileAttachments) != 0 {
		t.Errorf("send_email = %+v", mail)
	}
}

// TestAgentEncodingMatchesResponse checks that what the daemon would write
// for a decoded agent says nothing the service did not: every key written
// is in the service's response with the same value. (The other way round
// does not hold: fields this package does not model are dropped.)
func TestAgentEncodingMatchesResponse(t *testing.T) {
	raw := readTestdata(t, "agent_response.json")
	a := loadAgentResponse(t)
	out, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	assertSubset(t, "agent", decodeAny(t, out), decodeAny(t, raw))

	// The unknown block comes back exactly.
	var got, want struct {
		WorkflowDefinition struct {
			Blocks []json.RawMessage `json:"blocks"`
		} `json:"workflow_definition"`
	}
	_ = json.Unmarshal(out, &got)
	_ = json.Unmarshal(raw, &want)
	if !jsonEqual(t, got.WorkflowDefinition.Blocks[4], want.WorkflowDefinition.Blocks[4]) {
		t.Errorf("unknown block changed:\n got %s\nwant %s", got.WorkflowDefinition.Blocks[4], want.WorkflowDefinition.Blocks[4])
	}
	// Decoding the encoding gives the same value.
	var again Agent
	if err := json.Unmarshal(out, &again); err != nil {
		t.Fatal(err)
	}
	out2, _ := json.Marshal(&again)
	if !bytes.Equal(out, out2) {
		t.Errorf("encode/decode/encode is not stable")
	}
}

// assertSubset checks that got, a decoded JSON value, is contained in want.
func assertSubset(t *testing.T, path string, got, want any) {
	t.Helper()
	switch g := got.(type) {
	case map[string]any:
		w, ok := want.(map[string]any)
		if !ok {
			t.Errorf("%s: got an object, response has %v", path, want)
			return
		}
		for k, gv := range g {
			wv, ok := w[k]
			if !ok {
				t.Errorf("%s.%s: written (%v) but not in the response", path, k, gv)
				continue
			}
			assertSubset(t, path+"."+k, gv, wv)
		}
	case []any:
		w, ok := want.([]any)
		if !ok || len(w) != len(g) {
			t.Errorf("%s: got %d elements, response has %v", path, len(g), want)
			return
		}
		for i := range g {
			assertSubset(t, fmt.Sprintf("%s[%d]", path, i), g[i], w[i])
		}
	default:
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %v, response has %v", path, got, want)
		}
	}
}

func TestAgentDefinitionMatchesRequestFixture(t *testing.T) {
	a := loadAgentResponse(t)
	got, err := json.Marshal(AgentRequest{JSONDefinition: a.Definition()})
	if err != nil {
		t.Fatal(err)
	}
	want := readTestdata(t, "agent_request.json")
	// The request fixture is what a user would send; it decodes into the
	// request types without loss.
	var req AgentRequest
	if err := json.Unmarshal(want, &req); err != nil {
		t.Fatal(err)
	}
	reencoded, _ := json.Marshal(req)
	if g, w := normalizeDefinition(decodeJSON(t, reencoded)), normalizeDefinition(decodeJSON(t, want)); !reflect.DeepEqual(g, w) {
		t.Errorf("request fixture does not survive decode/encode:\n got %s\nwant %s", mustJSON(g), mustJSON(w))
	}
	g, w := normalizeDefinition(decodeJSON(t, got)), normalizeDefinition(decodeJSON(t, want))
	if !reflect.DeepEqual(g, w) {
		t.Errorf("Definition() differs from agent_request.json after normalization:\n got %s\nwant %s", mustJSON(g), mustJSON(w))
	}
}

func TestAgentDefinitionDetails(t *testing.T) {
	a := loadAgentResponse(t)
	before, _ := json.Marshal(a)
	def := a.Definition()

	if def.Title != "Contact Forms" || def.ProxyLocation.Name != ProxyResidential || def.FolderID != "fld_490440779503356000" {
		t.Errorf("header: %+v", def)
	}
	if def.AIFallback == nil || *def.AIFallback || def.MaskSecrets == nil || !*def.MaskSecrets || def.EnableSelfHealing != nil {
		t.Errorf("pointer bools: ai=%v mask=%v heal=%v", def.AIFallback, def.MaskSecrets, def.EnableSelfHealing)
	}
	if def.CDPConnectHeaders["Authorization"] != "***" {
		t.Errorf("masked header not kept: %v", def.CDPConnectHeaders)
	}
	wd := def.WorkflowDefinition
	if wd.Version != nil {
		t.Errorf("version kept: %d", *wd.Version)
	}
	if len(wd.Parameters) != 9 {
		t.Errorf("%d parameters, want 9 (output parameters dropped)", len(wd.Parameters))
	}
	for _, p := range wd.Parameters {
		if p.ParameterType == ParameterTypeOutput || p.ID() != "" || p.WorkflowID != "" || !p.CreatedAt.IsZero() || p.Source != nil {
			t.Errorf("parameter keeps response fields: %+v", p)
		}
	}
	if wd.Parameters[4].SourceParameterKey != "companies" {
		t.Errorf("context source = %q", wd.Parameters[4].SourceParameterKey)
	}
	var walk func(bs Blocks)
	walk = func(bs Blocks) {
		for _, b := range bs {
			if b.Base().OutputParameter != nil || b.Base().Parameters != nil {
				t.Errorf("%s keeps output_parameter/parameters", b.Base().Label)
			}
			switch x := b.(type) {
			case *ForLoopBlock:
				walk(x.LoopBlocks)
			case *WhileLoopBlock:
				walk(x.LoopBlocks)
			}
		}
	}
	walk(wd.Blocks)
	if nav := wd.Blocks[1].(*NavigationBlock); !reflect.DeepEqual(nav.ParameterKeys, []string{"website_url", "email"}) || nav.TaskType != "" || nav.IncludeExtractedText != nil {
		t.Errorf("navigation = %+v", nav)
	}
	if ext := wd.Blocks[2].(*ExtractionBlock); ext.ParameterKeys != nil || ext.IncludeExtractedText != nil {
		t.Errorf("extraction = %+v", ext)
	}
	loop := wd.Blocks[3].(*ForLoopBlock)
	if loop.LoopOverParameterKey != "companies" || loop.LoopOver != nil {
		t.Errorf("for_loop = %+v", loop)
	}
	if tp := loop.LoopBlocks[1].(*TextPromptBlock); !reflect.DeepEqual(tp.ParameterKeys, []string{"company_name", "Extract_Email_output"}) {
		t.Errorf("nested keys = %v", tp.ParameterKeys)
	}
	u := wd.Blocks[4].(*UnknownBlock)
	if bytes.Contains(u.Raw, []byte(`"output_parameter"`)) || bytes.Contains(u.Raw, []byte(`"parameters"`)) ||
		!bytes.Contains(u.Raw, []byte(`"parameter_keys":["email"]`)) || u.Base().Parameters != nil || u.Base().Label != "Search_News" {
		t.Errorf("unknown block = %s", u.Raw)
	}
	if !strings.HasPrefix(string(u.Raw), `{"label":"Search_News","next_block_label":null,"block_type":"web_search",`) {
		t.Errorf("unknown block key order changed: %.80s", u.Raw)
	}
	if c := wd.Blocks[5].(*ConditionalBlock); c.BranchConditions[0].ID != "" {
		t.Errorf("branch id kept")
	}
	mail := wd.Blocks[6].(*SendEmailBlock)
	if mail.SMTPHostSecretParameterKey != "smtp_host" || mail.SMTPPasswordSecretParameterKey != "smtp_password" || mail.SMTPHost != nil {
		t.Errorf("send_email = %+v", mail)
	}

	// The agent is untouched and shares nothing with the definition.
	def.Model["name"] = "changed"
	def.CDPConnectHeaders["Authorization"] = "changed"
	def.WorkflowDefinition.Blocks[1].(*NavigationBlock).ParameterKeys[0] = "changed"
	*def.MaxElapsedTimeMinutes = 1
	def.ProxyLocation.Name = "NONE"
	wd.Parameters[2].DefaultValue[1] = 'X'
	after, _ := json.Marshal(a)
	if !bytes.Equal(before, after) {
		t.Error("Definition or edits of its result changed the agent")
	}
}

func TestAgentDefinitionNil(t *testing.T) {
	var a *Agent
	if a.Definition() != nil {
		t.Error("nil agent gave a definition")
	}
	empty := (&Agent{}).Definition()
	data, err := json.Marshal(empty)
	if err != nil || string(data) != `{"title":"","workflow_definition":{"parameters":[],"blocks":[]},"ai_fallback":false}` {
		t.Errorf("zero agent definition = %s, %v", data, err)
	}
}

func TestAgentDefinitionRequiredLists(t *testing.T) {
	data, err := json.Marshal(&AgentDefinition{Title: "Empty"})
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != `{"title":"Empty","workflow_definition":{"parameters":[],"blocks":[]}}` {
		t.Errorf("got %s", data)
	}
	data, _ = json.Marshal(WorkflowDefinition{Version: new(2), Parameters: []Parameter{}})
	if string(data) != `{"version":2,"parameters":[],"blocks":[]}` {
		t.Errorf("got %s", data)
	}
	// Decoding keeps the difference between a missing list and an empty one
	// out of the way: both encode as [].
	var d WorkflowDefinition
	_ = json.Unmarshal([]byte(`{"parameters":null}`), &d)
	data, _ = json.Marshal(d)
	if string(data) != `{"parameters":[],"blocks":[]}` {
		t.Errorf("got %s", data)
	}
}

func TestAgentRequestEncoding(t *testing.T) {
	def := &AgentDefinition{
		Title: "Login check",
		WorkflowDefinition: WorkflowDefinition{
			Parameters: []Parameter{{ParameterType: ParameterTypeWorkflow, Key: "url", WorkflowParameterType: WorkflowParameterString}},
			Blocks:     Blocks{&NavigationBlock{BlockBase: BlockBase{Label: "Open"}, NavigationGoal: "open {{url}}", URL: "{{url}}"}},
		},
		AIFallback: new(false),
		CacheKey:   new(""),
	}
	data, err := json.Marshal(AgentRequest{JSONDefinition: def})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"json_definition":{"title":"Login check","workflow_definition":{"parameters":[{"parameter_type":"workflow","key":"url","workflow_parameter_type":"string"}],` +
		`"blocks":[{"block_type":"navigation","label":"Open","navigation_goal":"open {{url}}","url":"{{url}}"}]},"ai_fallback":false,"cache_key":""}}`
	if string(data) != want {
		t.Errorf("got  %s\nwant %s", data, want)
	}
	data, _ = json.Marshal(AgentRequest{YAMLDefinition: "title: x\n"})
	if string(data) != `{"yaml_definition":"title: x\n"}` {
		t.Errorf("yaml: %s", data)
	}
}

func TestAgentDefinitionYAMLExample(t *testing.T) {
	raw := readTestdata(t, "agent_yaml_example.json")
	var def AgentDefinition
	if err := json.Unmarshal(raw, &def); err != nil {
		t.Fatal(err)
	}
	if def.Title != "Contact Forms" || def.ProxyLocation == nil || def.ProxyLocation.Name != ProxyResidential ||
		def.TOTPVerificationURL != "https://example.com/totp" || def.PersistBrowserSession || def.Model.Name() != "gpt-4.1" {
		t.Errorf("header = %+v", def)
	}
	wd := def.WorkflowDefinition
	if len(wd.Parameters) != 2 || wd.Parameters[1].Key != "email" || wd.Parameters[1].ParameterType != ParameterTypeWorkflow ||
		wd.Parameters[1].WorkflowParameterType != WorkflowParameterString || !isJSONNull(wd.Parameters[1].DefaultValue) {
		t.Errorf("parameters = %+v", wd.Parameters)
	}
	if len(wd.Blocks) != 2 {
		t.Fatalf("%d blocks", len(wd.Blocks))
	}
	nav, ok := wd.Blocks[0].(*NavigationBlock)
	if !ok || nav.Label != "Fill_Out_Contact_Form" || !nav.ContinueOnFailure || nav.URL != "{{website_url}}" ||
		nav.Engine != EngineSkyvernV1 || nav.MaxStepsPerRun != nil || nav.ErrorCodeMapping != nil ||
		nav.ParameterKeys == nil || len(nav.ParameterKeys) != 0 || nav.NavigationGoal == "" {
		t.Errorf("navigation = %+v", wd.Blocks[0])
	}
	ext, ok := wd.Blocks[1].(*ExtractionBlock)
	if !ok || ext.DataExtractionGoal != "Extract a company email if available " || !isJSONNull(ext.DataSchema) || ext.URL != "" {
		t.Errorf("extraction = %+v", wd.Blocks[1])
	}
	// Sending it says the same thing the example says.
	out, err := json.Marshal(&def)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := normalizeDefinition(decodeJSON(t, out)), normalizeDefinition(decodeJSON(t, raw)); !reflect.DeepEqual(g, w) {
		t.Errorf("re-encoded example differs:\n got %s\nwant %s", mustJSON(g), mustJSON(w))
	}
	if !bytes.Contains(out, []byte(`{"block_type":"navigation","label":"Fill_Out_Contact_Form","continue_on_failure":true,`)) {
		t.Errorf("encoding: %s", out)
	}
}

func TestParameterEncoding(t *testing.T) {
	p := Parameter{
		ParameterType: ParameterTypeWorkflow, Key: "filters", WorkflowParameterType: WorkflowParameterJSON,
		DefaultValue: json.RawMessage(`{"z":1,"a":[true,null]}`),
	}
	data, _ := json.Marshal(p)
	if string(data) != `{"parameter_type":"workflow","key":"filters","workflow_parameter_type":"json","default_value":{"z":1,"a":[true,null]}}` {
		t.Errorf("workflow parameter: %s", data)
	}
	cred := Parameter{
		ParameterType: ParameterTypeCredential, Key: "login", CredentialID: "cred_1",
		CredentialIDs: []string{"cred_1", "cred_2"}, SelectionStrategy: "round_robin",
		FallbackCredentialIDs: []string{"cred_3"}, FallbackTrigger: "login_failed",
	}
	data, _ = json.Marshal(cred)
	if string(data) != `{"parameter_type":"credential","key":"login","credential_id":"cred_1","credential_ids":["cred_1","cred_2"],`+
		`"selection_strategy":"round_robin","fallback_credential_ids":["cred_3"],"fallback_trigger":"login_failed"}` {
		t.Errorf("credential parameter: %s", data)
	}
	// Every parameter type round-trips through the flat struct.
	params := []Parameter{
		p, cred,
		{ParameterType: ParameterTypeContext, Key: "c", SourceParameterKey: "filters"},
		{ParameterType: ParameterTypeAWSSecret, Key: "s", AWSKey: "K"},
		{ParameterType: ParameterTypeOnePassword, Key: "o", VaultID: "v", ItemID: "i"},
		{ParameterType: ParameterTypeAzureVaultCredential, Key: "az", VaultName: "v", UsernameKey: "u", PasswordKey: "p", TOTPSecretKey: "t"},
		{ParameterType: ParameterTypeBitwardenLoginCredential, Key: "bw", BitwardenClientIDAWSSecretKey: "a", BitwardenClientSecretAWSSecretKey: "b",
			BitwardenMasterPasswordAWSSecretKey: "c", URLParameterKey: "url", BitwardenCollectionID: "col", BitwardenItemID: "item"},
		{ParameterType: ParameterTypeBitwardenSensitiveInformation, Key: "bws", BitwardenClientIDAWSSecretKey: "a", BitwardenClientSecretAWSSecretKey: "b",
			BitwardenMasterPasswordAWSSecretKey: "c", BitwardenCollectionID: "col", BitwardenIdentityKey: "id", BitwardenIdentityFields: []string{"ssn"}},
		{ParameterType: ParameterTypeBitwardenCreditCardData, Key: "bwc", BitwardenClientIDAWSSecretKey: "a", BitwardenClientSecretAWSSecretKey: "b",
			BitwardenMasterPasswordAWSSecretKey: "c", BitwardenCollectionID: "col", BitwardenItemID: "card"},
		{ParameterType: ParameterTypeOutput, Key: "x_output", OutputParameterID: "op_1", WorkflowID: "w_1",
			CreatedAt: NewTime(time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)), ModifiedAt: NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
			DeletedAt: TimePtr(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))},
		{ParameterType: ParameterTypeAzureSecret, Key: "azs", AzureSecretParameterID: "asp_9", AzureKey: "k"},
	}
	for _, want := range params {
		data, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		var got Parameter
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s round trip:\n got %+v\nwant %+v", want.ParameterType, got, want)
		}
	}
	if id := params[len(params)-1].ID(); id != "asp_9" {
		t.Errorf("ID() = %q", id)
	}
	data, _ = json.Marshal(params[len(params)-2])
	if !bytes.Contains(data, []byte(`"created_at":"2026-01-02T03:04:05.000006","modified_at":"2026-01-02T03:04:05","deleted_at":"2026-02-01T00:00:00"`)) {
		t.Errorf("timestamps: %s", data)
	}
}

func TestAgentEncodesNulls(t *testing.T) {
	data, err := json.Marshal(&Agent{WorkflowPermanentID: "wpid_1", AgentID: "wpid_1"})
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for _, want := range []string{
		`"description":null`, `"proxy_location":null`, `"model":null`, `"extra_http_headers":null`, `"cache_key":null`,
		`"run_sequentially":null`, `"deleted_at":null`, `"workflow_definition":{"parameters":[],"blocks":[]}`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %s in %s", want, s)
		}
	}
	// The order in which the service declares an agent's fields, agent_id
	// last.
	want := []string{
		"workflow_id", "organization_id", "title", "workflow_permanent_id", "version", "is_saved_task", "is_template",
		"description", "workflow_definition", "proxy_location", "webhook_callback_url", "totp_verification_url",
		"totp_identifier", "persist_browser_session", "reuse_browser_session", "mask_secrets", "pin_saved_session_ip",
		"browser_profile_id", "browser_profile_key", "model", "status", "max_screenshot_scrolls",
		"max_elapsed_time_minutes", "extra_http_headers", "cdp_connect_headers", "run_with", "ai_fallback", "cache_key",
		"adaptive_caching", "enable_self_healing", "code_version", "generate_script_on_terminal", "run_sequentially",
		"sequential_key", "folder_id", "import_error", "created_by", "edited_by", "copilot_authored", "created_at",
		"modified_at", "deleted_at", "agent_id",
	}
	members, err := jsonobject.Split(data)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range members {
		got = append(got, m.Key)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("field order:\n got %v\nwant %v", got, want)
	}
}

// BenchmarkDecodeAgent100Blocks decodes a response-side agent with 100
// top-level blocks of mixed types (every known type, some unknown ones, and
// loops with nested blocks), each with its output parameter and parameter
// records, as the service returns them.
func BenchmarkDecodeAgent100Blocks(b *testing.B) {
	data := benchmarkAgentJSON(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var a Agent
		if err := json.Unmarshal(data, &a); err != nil {
			b.Fatal(err)
		}
		if len(a.WorkflowDefinition.Blocks) != 100 {
			b.Fatalf("%d blocks", len(a.WorkflowDefinition.Blocks))
		}
	}
}

// BenchmarkDecodeAgent100BlocksGeneric decodes the same document into a
// map: the floor a typed decode of it is compared with.
func BenchmarkDecodeAgent100BlocksGeneric(b *testing.B) {
	data := benchmarkAgentJSON(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var v map[string]any
		if err := json.Unmarshal(data, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func benchmarkAgentJSON(b *testing.B) []byte {
	b.Helper()
	at := NewTime(time.Date(2026, 1, 31, 15, 20, 42, 160725000, time.UTC))
	input := Parameter{
		ParameterType: ParameterTypeWorkflow, Key: "website_url", WorkflowParameterID: "wp_490440779503357101",
		WorkflowParameterType: WorkflowParameterString, WorkflowID: "w_490440779503357001",
		DefaultValue: json.RawMessage(`"https://example.com"`), CreatedAt: at, ModifiedAt: at,
	}
	a := Agent{
		WorkflowID: "w_490440779503357001", OrganizationID: "o_485917350850524254", Title: "Benchmark",
		WorkflowPermanentID: "wpid_490440779503357000", Version: 7, Description: new("100 blocks"),
		ProxyLocation: Proxy(ProxyResidential), Model: Model{"name": "gpt-4.1"}, Status: AgentStatusPublished,
		RunWith: "agent", AIFallback: true, CacheKey: new("default"), CreatedAt: at, ModifiedAt: at,
		AgentID: "wpid_490440779503357000",
		WorkflowDefinition: WorkflowDefinition{
			Version: new(1), Parameters: []Parameter{input},
		},
	}
	samples := len(sampleBlocks())
	for i := range 100 {
		var blk Block
		if i%10 == 9 {
			blk = &UnknownBlock{Type: "web_search", Raw: json.RawMessage(fmt.Sprintf(
				`{"block_type":"web_search","label":"Search_%d","query":"q {{website_url}}","num_results":10,"json_schema":{"type":"object","properties":{"a":{"type":"string"}}}}`, i))}
		} else {
			blk = sampleBlocks()[i%samples]
			blk.Base().Label = fmt.Sprintf("%s_%d", blk.Base().Label, i)
		}
		label := blk.Base().Label
		if u, ok := blk.(*UnknownBlock); ok {
			_ = json.Unmarshal(u.Raw, &u.base)
			label = u.base.Label
		}
		out := Parameter{
			ParameterType: ParameterTypeOutput, Key: label + "_output", Description: "Output parameter for block " + label,
			OutputParameterID: fmt.Sprintf("op_4904407795033572%02d", i), WorkflowID: "w_490440779503357001",
			CreatedAt: at, ModifiedAt: at,
		}
		a.WorkflowDefinition.Parameters = append(a.WorkflowDefinition.Parameters, out)
		if _, ok := blk.(*UnknownBlock); !ok {
			blk.Base().OutputParameter = &out
			blk.Base().Parameters = []Parameter{input}
		}
		a.WorkflowDefinition.Blocks = append(a.WorkflowDefinition.Blocks, blk)
	}
	data, err := json.Marshal(&a)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// decodeJSON decodes data into plain Go values (numbers as float64).
func decodeJSON(t testing.TB, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	return v
}

func mustJSON(v any) string {
	data, _ := json.MarshalIndent(v, "", "  ")
	return string(data)
}

// Values equal to what leaving a key out means, for normalizeDefinition:
// the fields whose default is true, and non-zero defaults by key.
var (
	defaultTrueKeys = map[string]bool{
		"complete_verification": true, "include_timestamp": true, "print_background": true, "follow_redirects": true,
		"wait_for_completion": true, "has_header_row": true, "include_body": true, "ai_fallback": true,
	}
	defaultValues = map[string][]any{
		"engine": {"skyvern-1.0"}, "status": {"published"}, "run_with": {"agent"}, "cache_key": {"default"},
		"criteria_type": {"jinja2_template"}, "ai_fallback": {"fallback"}, "method": {"GET"}, "format": {"A4"},
		"max_retries": {0.0}, "wait_sec": {0.0}, "file_type": {"auto_detect"}, "storage_type": {"s3"},
		"download_target": {"website"}, "write_mode": {"append"}, "action_type": {"null_action"},
	}
)

// normalizeDefinition removes from a decoded definition every key whose
// value means the same as leaving it out: null, "", [], {}, false (true for
// the fields that default to true) and documented defaults. Two
// definitions that normalize equal ask the service for the same agent.
func normalizeDefinition(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			val = normalizeDefinition(val)
			if meansUnset(k, val) {
				delete(x, k)
				continue
			}
			x[k] = val
		}
		return x
	case []any:
		for i := range x {
			x[i] = normalizeDefinition(x[i])
		}
		return x
	}
	return v
}

func meansUnset(key string, v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		if x == "" {
			return true
		}
	case bool:
		if x == defaultTrueKeys[key] {
			return true
		}
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	for _, d := range defaultValues[key] {
		if reflect.DeepEqual(d, v) {
			return true
		}
	}
	return false
}

// RequestShape converts without the copy Definition makes, and without
// changing the definition it reads.
func TestWorkflowDefinitionRequestShape(t *testing.T) {
	a := loadAgentResponse(t)
	before, _ := json.Marshal(a)
	got, err := json.Marshal(a.WorkflowDefinition.RequestShape())
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := json.Marshal(a); !bytes.Equal(before, after) {
		t.Error("RequestShape changed the definition")
	}
	want, _ := json.Marshal(a.Definition().WorkflowDefinition)
	if !bytes.Equal(got, want) {
		t.Errorf("RequestShape differs from Definition's:\n got %s\nwant %s", got, want)
	}
}

func TestParameterKeys(t *testing.T) {
	if ParameterKeys(nil) != nil {
		t.Error("no parameters gave keys")
	}
	ps := []Parameter{{Key: "a"}, {Key: "b"}}
	if got := ParameterKeys(ps); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("ParameterKeys = %v", got)
	}
}
