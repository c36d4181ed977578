package client

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/abctl/abctl/internal/jsonobject"
	"github.com/abctl/abctl/internal/ptr"
)

// Parameter is an agent parameter: a value the blocks reference as
// {{key}}. ParameterType tells which fields apply.
//
// Upstream has one schema per parameter type; this package uses one flat
// struct for all of them, because parameters are small, most of them are of
// the "workflow" type, and a flat struct needs no union machinery (each
// type's fields are marked below; fields of other types stay empty and are
// not written).
//
// Requests carry the fields up to BitwardenIdentityFields. Responses carry
// full records: ids, the owning workflow version and timestamps; each block
// also gets an auto-created "output" parameter keyed <label>_output, which
// the service rejects on input.
type Parameter struct {
	ParameterType ParameterType `json:"parameter_type"`
	// Key is the name blocks use: a Python identifier, not equal to any
	// <label>_output.
	Key         string `json:"key"`
	Description string `json:"description,omitempty"`

	// workflow: the value type and the default, any JSON value (kept as
	// sent; null or absent means no default).
	WorkflowParameterType WorkflowParameterType `json:"workflow_parameter_type,omitempty"`
	DefaultValue          json.RawMessage       `json:"default_value,omitempty"`

	// context: the parameter whose value this one reads.
	SourceParameterKey string `json:"source_parameter_key,omitempty"`

	// aws_secret.
	AWSKey string `json:"aws_key,omitempty"`

	// credential: a stored credential (cred_...), with optional alternatives.
	CredentialID          string   `json:"credential_id,omitempty"`
	CredentialIDs         []string `json:"credential_ids,omitempty"`
	SelectionStrategy     string   `json:"selection_strategy,omitempty"`
	FallbackCredentialIDs []string `json:"fallback_credential_ids,omitempty"`
	FallbackTrigger       string   `json:"fallback_trigger,omitempty"`

	// onepassword.
	VaultID string `json:"vault_id,omitempty"`
	ItemID  string `json:"item_id,omitempty"`

	// azure_vault_credential.
	VaultName     string `json:"vault_name,omitempty"`
	UsernameKey   string `json:"username_key,omitempty"`
	PasswordKey   string `json:"password_key,omitempty"`
	TOTPSecretKey string `json:"totp_secret_key,omitempty"`

	// bitwarden_login_credential, bitwarden_sensitive_information and
	// bitwarden_credit_card_data: the three AWS secrets that unlock the
	// vault, then what to read from it.
	BitwardenClientIDAWSSecretKey       string   `json:"bitwarden_client_id_aws_secret_key,omitempty"`
	BitwardenClientSecretAWSSecretKey   string   `json:"bitwarden_client_secret_aws_secret_key,omitempty"`
	BitwardenMasterPasswordAWSSecretKey string   `json:"bitwarden_master_password_aws_secret_key,omitempty"`
	URLParameterKey                     string   `json:"url_parameter_key,omitempty"` // login credential only
	BitwardenCollectionID               string   `json:"bitwarden_collection_id,omitempty"`
	BitwardenItemID                     string   `json:"bitwarden_item_id,omitempty"`
	BitwardenIdentityKey                string   `json:"bitwarden_identity_key,omitempty"`    // sensitive information only
	BitwardenIdentityFields             []string `json:"bitwarden_identity_fields,omitempty"` // sensitive information only

	// Response only: the record id (one field per parameter type, as the
	// service names them; see ID), the source record and value of a
	// context parameter, the key of an azure_secret parameter (a type that
	// exists in responses only), the agent version (w_...) and timestamps.
	WorkflowParameterID                      string          `json:"workflow_parameter_id,omitempty"`
	OutputParameterID                        string          `json:"output_parameter_id,omitempty"`
	AWSSecretParameterID                     string          `json:"aws_secret_parameter_id,omitempty"`
	AzureSecretParameterID                   string          `json:"azure_secret_parameter_id,omitempty"`
	CredentialParameterID                    string          `json:"credential_parameter_id,omitempty"`
	OnePasswordCredentialParameterID         string          `json:"onepassword_credential_parameter_id,omitempty"`
	AzureVaultCredentialParameterID          string          `json:"azure_vault_credential_parameter_id,omitempty"`
	BitwardenLoginCredentialParameterID      string          `json:"bitwarden_login_credential_parameter_id,omitempty"`
	BitwardenSensitiveInformationParameterID string          `json:"bitwarden_sensitive_information_parameter_id,omitempty"`
	BitwardenCreditCardDataParameterID       string          `json:"bitwarden_credit_card_data_parameter_id,omitempty"`
	Source                                   *Parameter      `json:"source,omitempty"`
	Value                                    json.RawMessage `json:"value,omitempty"`
	AzureKey                                 string          `json:"azure_key,omitempty"`
	WorkflowID                               string          `json:"workflow_id,omitempty"`
	CreatedAt                                Time            `json:"created_at,omitzero"`
	ModifiedAt                               Time            `json:"modified_at,omitzero"`
	DeletedAt                                *Time           `json:"deleted_at,omitempty"`
}

// ID returns the record id the service assigned to the parameter (wp_...,
// op_..., ...), whichever of the per-type id fields is set, or "" for a
// parameter that did not come from a response.
func (p *Parameter) ID() string {
	for _, id := range []string{
		p.WorkflowParameterID, p.OutputParameterID, p.AWSSecretParameterID, p.AzureSecretParameterID,
		p.CredentialParameterID, p.OnePasswordCredentialParameterID, p.AzureVaultCredentialParameterID,
		p.BitwardenLoginCredentialParameterID, p.BitwardenSensitiveInformationParameterID,
		p.BitwardenCreditCardDataParameterID,
	} {
		if id != "" {
			return id
		}
	}
	return ""
}

// WorkflowDefinition is the body of an agent: its parameters and blocks.
// The same type reads the response-side definition, whose parameters are
// full records (output parameters included) and whose blocks carry
// parameters and output_parameter; Agent.Definition converts back.
type WorkflowDefinition struct {
	// Version is 2 when the definition routes with conditional blocks or
	// next_block_label, else 1; nil lets the service compute it.
	Version    *int       `json:"version,omitempty"`
	Parameters Parameters `json:"parameters"` // required; nil is written as []
	Blocks     Blocks     `json:"blocks"`     // required; nil is written as []
	// FinallyBlockLabel names a top-level block that runs last, whatever
	// happened before.
	FinallyBlockLabel    string            `json:"finally_block_label,omitempty"`
	ErrorCodeMapping     map[string]string `json:"error_code_mapping,omitempty"`
	WorkflowSystemPrompt string            `json:"workflow_system_prompt,omitempty"`
	// CompletionContract is managed by the service's copilot; it is kept as
	// JSON and passed through.
	CompletionContract json.RawMessage `json:"completion_contract,omitempty"`
	// CodeArtifactMetadata is what the service's copilot records of the
	// code it generated for the definition's blocks (definitions exported
	// from the service carry it); abctl does not read it, and keeps it as
	// JSON so that it comes back as it went in.
	CodeArtifactMetadata json.RawMessage `json:"code_artifact_metadata,omitempty"`
}

// Parameters is a definition's parameter list. The service requires the
// list and rejects null, so nil is written as [].
type Parameters []Parameter

// MarshalJSON writes the list, [] when it is nil.
func (ps Parameters) MarshalJSON() ([]byte, error) {
	if ps == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]Parameter(ps))
}

// AgentDefinition is what creates or updates an agent (upstream
// WorkflowCreateYAMLRequest). Title and WorkflowDefinition are required;
// every other field is optional and left out when unset, so the service
// applies its default.
type AgentDefinition struct {
	// Title is required. "New Workflow" or "New Agent" with blocks present
	// is replaced by a generated title.
	Title         string         `json:"title"`
	Description   string         `json:"description,omitempty"`
	ProxyLocation *ProxyLocation `json:"proxy_location,omitempty"`
	// WebhookCallbackURL is the default webhook of the agent's runs (the
	// field is not webhook_url here).
	WebhookCallbackURL    string `json:"webhook_callback_url,omitempty"`
	TOTPVerificationURL   string `json:"totp_verification_url,omitempty"`
	TOTPIdentifier        string `json:"totp_identifier,omitempty"`
	PersistBrowserSession bool   `json:"persist_browser_session,omitempty"`
	ReuseBrowserSession   bool   `json:"reuse_browser_session,omitempty"`
	MaskSecrets           *bool  `json:"mask_secrets,omitempty"`
	PinSavedSessionIP     bool   `json:"pin_saved_session_ip,omitempty"`
	BrowserProfileID      string `json:"browser_profile_id,omitempty"`
	BrowserProfileKey     string `json:"browser_profile_key,omitempty"`
	Model                 Model  `json:"model,omitempty"`
	// WorkflowDefinition is required; its lists are always written.
	WorkflowDefinition    WorkflowDefinition `json:"workflow_definition"`
	IsSavedTask           bool               `json:"is_saved_task,omitempty"`
	MaxScreenshotScrolls  *int               `json:"max_screenshot_scrolls,omitempty"`
	MaxElapsedTimeMinutes *int               `json:"max_elapsed_time_minutes,omitempty"` // 1 to 480
	ExtraHTTPHeaders      map[string]string  `json:"extra_http_headers,omitempty"`
	// CDPConnectHeaders come back masked as "***" in responses; on update a
	// "***" value keeps the stored value, so a fetched agent can be sent
	// back unchanged.
	CDPConnectHeaders map[string]string `json:"cdp_connect_headers,omitempty"`
	Status            AgentStatus       `json:"status,omitempty"`   // default published
	RunWith           string            `json:"run_with,omitempty"` // "agent" (default) or "code"
	AIFallback        *bool             `json:"ai_fallback,omitempty"`
	CacheKey          *string           `json:"cache_key,omitempty"` // nil means "default"
	AdaptiveCaching   bool              `json:"adaptive_caching,omitempty"`
	// EnableSelfHealing nil means false on create and "keep the current
	// value" on update.
	EnableSelfHealing        *bool  `json:"enable_self_healing,omitempty"`
	CodeVersion              *int   `json:"code_version,omitempty"` // 1 or 2
	GenerateScriptOnTerminal bool   `json:"generate_script_on_terminal,omitempty"`
	RunSequentially          bool   `json:"run_sequentially,omitempty"`
	SequentialKey            string `json:"sequential_key,omitempty"`
	// FolderID puts a new agent in a folder; the service ignores it on
	// update, where the agent keeps its folder.
	FolderID string `json:"folder_id,omitempty"`
}

// AgentRequest is the body of agent creation and update: exactly one of a
// definition (sent as JSON) or a YAML text with the same field names. The
// service parses YAML itself and, for YAML only, fixes invalid block labels
// and parameter keys.
type AgentRequest struct {
	JSONDefinition *AgentDefinition `json:"json_definition,omitempty"`
	YAMLDefinition string           `json:"yaml_definition,omitempty"`
}

// Agent is an agent (a workflow upstream) as the service returns it: one
// version of it. Fields are in the service's order.
//
// Nullable fields are pointers (or maps) without omitempty, so that the
// daemon, which encodes this type, writes null where the hosted service
// does.
type Agent struct {
	WorkflowID               string             `json:"workflow_id"` // this version (w_...)
	OrganizationID           string             `json:"organization_id"`
	Title                    string             `json:"title"`
	WorkflowPermanentID      string             `json:"workflow_permanent_id"` // the agent (wpid_...), the same across versions
	Version                  int                `json:"version"`               // 1, 2, ...: every update adds one
	IsSavedTask              bool               `json:"is_saved_task"`
	IsTemplate               bool               `json:"is_template"`
	Description              *string            `json:"description"`
	WorkflowDefinition       WorkflowDefinition `json:"workflow_definition"`
	ProxyLocation            *ProxyLocation     `json:"proxy_location"`
	WebhookCallbackURL       *string            `json:"webhook_callback_url"`
	TOTPVerificationURL      *string            `json:"totp_verification_url"`
	TOTPIdentifier           *string            `json:"totp_identifier"`
	PersistBrowserSession    bool               `json:"persist_browser_session"`
	ReuseBrowserSession      bool               `json:"reuse_browser_session"`
	MaskSecrets              bool               `json:"mask_secrets"`
	PinSavedSessionIP        bool               `json:"pin_saved_session_ip"`
	BrowserProfileID         *string            `json:"browser_profile_id"`
	BrowserProfileKey        *string            `json:"browser_profile_key"`
	Model                    Model              `json:"model"`
	Status                   AgentStatus        `json:"status"`
	MaxScreenshotScrolls     *int               `json:"max_screenshot_scrolls"`
	MaxElapsedTimeMinutes    *int               `json:"max_elapsed_time_minutes"`
	ExtraHTTPHeaders         map[string]string  `json:"extra_http_headers"`
	CDPConnectHeaders        map[string]string  `json:"cdp_connect_headers"` // values masked as "***"
	RunWith                  string             `json:"run_with"`
	AIFallback               bool               `json:"ai_fallback"`
	CacheKey                 *string            `json:"cache_key"`
	AdaptiveCaching          bool               `json:"adaptive_caching"`
	EnableSelfHealing        bool               `json:"enable_self_healing"`
	CodeVersion              *int               `json:"code_version"`
	GenerateScriptOnTerminal bool               `json:"generate_script_on_terminal"`
	RunSequentially          *bool              `json:"run_sequentially"`
	SequentialKey            *string            `json:"sequential_key"`
	FolderID                 *string            `json:"folder_id"`
	ImportError              *string            `json:"import_error"` // why an import failed (status import_failed)
	CreatedBy                *string            `json:"created_by"`
	EditedBy                 *string            `json:"edited_by"`
	CopilotAuthored          bool               `json:"copilot_authored"`
	CreatedAt                Time               `json:"created_at"`
	ModifiedAt               Time               `json:"modified_at"`
	DeletedAt                *Time              `json:"deleted_at"`
	AgentID                  string             `json:"agent_id"` // always equal to WorkflowPermanentID
}

// Definition returns a definition that, sent as an update, would store an
// agent equal to a: what `get agent -o yaml` shows and `apply` compares
// with. The result shares no memory with a.
//
// It copies the user-settable fields and drops ids, timestamps and
// versions (the definition's version is recomputed by the service). In the
// workflow definition it drops the auto-created "output" parameters and the
// response-only fields of parameters and blocks, and turns the response
// shapes back into the request ones: a block's parameters become its
// parameter_keys (when those are empty), a for_loop's loop_over its
// loop_over_parameter_key, a send_email block's smtp_* records their
// smtp_*_secret_parameter_key, a context parameter's source its
// source_parameter_key. An UnknownBlock loses output_parameter and has its
// parameters turned into parameter_keys, other keys kept in order.
//
// Booleans whose request field is a pointer are set only when they differ
// from what leaving them out means: AIFallback when false, MaskSecrets and
// EnableSelfHealing when true. CDPConnectHeaders keep their "***" values,
// which the service reads as "unchanged".
func (a *Agent) Definition() *AgentDefinition {
	if a == nil {
		return nil
	}
	// The request shape shares with a what it does not change; its deep
	// copy shares nothing.
	shape := a.WorkflowDefinition.RequestShape()
	d := &AgentDefinition{
		Title:                    a.Title,
		Description:              ptr.Value(a.Description),
		ProxyLocation:            a.ProxyLocation.clone(),
		WebhookCallbackURL:       ptr.Value(a.WebhookCallbackURL),
		TOTPVerificationURL:      ptr.Value(a.TOTPVerificationURL),
		TOTPIdentifier:           ptr.Value(a.TOTPIdentifier),
		PersistBrowserSession:    a.PersistBrowserSession,
		ReuseBrowserSession:      a.ReuseBrowserSession,
		PinSavedSessionIP:        a.PinSavedSessionIP,
		BrowserProfileID:         ptr.Value(a.BrowserProfileID),
		BrowserProfileKey:        ptr.Value(a.BrowserProfileKey),
		Model:                    cloneModel(a.Model),
		WorkflowDefinition:       shape.clone(),
		IsSavedTask:              a.IsSavedTask,
		MaxScreenshotScrolls:     clonePointer(a.MaxScreenshotScrolls),
		MaxElapsedTimeMinutes:    clonePointer(a.MaxElapsedTimeMinutes),
		ExtraHTTPHeaders:         maps.Clone(a.ExtraHTTPHeaders),
		CDPConnectHeaders:        maps.Clone(a.CDPConnectHeaders),
		Status:                   a.Status,
		RunWith:                  a.RunWith,
		CacheKey:                 clonePointer(a.CacheKey),
		AdaptiveCaching:          a.AdaptiveCaching,
		CodeVersion:              clonePointer(a.CodeVersion),
		GenerateScriptOnTerminal: a.GenerateScriptOnTerminal,
		RunSequentially:          ptr.Value(a.RunSequentially),
		SequentialKey:            ptr.Value(a.SequentialKey),
		FolderID:                 ptr.Value(a.FolderID),
	}
	if a.MaskSecrets {
		d.MaskSecrets = new(true)
	}
	if !a.AIFallback {
		d.AIFallback = new(false)
	}
	if a.EnableSelfHealing {
		d.EnableSelfHealing = new(true)
	}
	return d
}

// RequestShape returns d in the request shape, as Agent.Definition turns
// an agent's definition (see there), without changing d. It copies only
// what it changes (the parameters, the blocks and the lists it edits) and
// shares everything else with d, so that a program that only reads the
// result, as the engine does to run a stored version, needs no copy of the
// whole definition; Agent.Definition gives a deep copy of it, which shares
// nothing.
func (d *WorkflowDefinition) RequestShape() WorkflowDefinition {
	out := WorkflowDefinition{
		Parameters:           make([]Parameter, 0, len(d.Parameters)),
		Blocks:               definitionBlocks(d.Blocks),
		FinallyBlockLabel:    d.FinallyBlockLabel,
		ErrorCodeMapping:     d.ErrorCodeMapping,
		WorkflowSystemPrompt: d.WorkflowSystemPrompt,
		CompletionContract:   d.CompletionContract,
		CodeArtifactMetadata: d.CodeArtifactMetadata,
	}
	for _, p := range d.Parameters {
		if p.ParameterType == ParameterTypeOutput {
			continue
		}
		out.Parameters = append(out.Parameters, parameterDefinition(p))
	}
	return out
}

// parameterDefinition returns p without its response-only fields.
func parameterDefinition(p Parameter) Parameter {
	if p.SourceParameterKey == "" && p.Source != nil {
		p.SourceParameterKey = p.Source.Key
	}
	p.WorkflowParameterID, p.OutputParameterID, p.AWSSecretParameterID, p.AzureSecretParameterID = "", "", "", ""
	p.CredentialParameterID, p.OnePasswordCredentialParameterID, p.AzureVaultCredentialParameterID = "", "", ""
	p.BitwardenLoginCredentialParameterID, p.BitwardenSensitiveInformationParameterID = "", ""
	p.BitwardenCreditCardDataParameterID = ""
	p.Source, p.Value, p.WorkflowID = nil, nil, ""
	p.CreatedAt, p.ModifiedAt, p.DeletedAt = Time{}, Time{}, nil
	return p
}

// ParameterKeys returns the keys of ps, in order; nil for none. It is how
// a block's parameter records become its parameter_keys.
func ParameterKeys(ps []Parameter) []string {
	if len(ps) == 0 {
		return nil
	}
	keys := make([]string, len(ps))
	for i := range ps {
		keys[i] = ps[i].Key
	}
	return keys
}

func keyOf(p *Parameter) string {
	if p == nil {
		return ""
	}
	return p.Key
}

func definitionBlocks(bs Blocks) Blocks {
	if bs == nil {
		return nil
	}
	out := make(Blocks, len(bs))
	for i, b := range bs {
		out[i] = definitionBlock(b)
	}
	return out
}

// definitionBlock returns a response-side block in the request shape: a
// new block, b unchanged.
func definitionBlock(b Block) Block {
	if IsNilBlock(b) {
		return b
	}
	if u, ok := b.(*UnknownBlock); ok {
		return u.definition()
	}
	b = copyBlock(b, false)
	base := b.Base()
	// parameter_keys, when empty, come from the response's parameter
	// records.
	if keys := BlockParameterKeys(b); keys != nil && len(*keys) == 0 {
		*keys = ParameterKeys(base.Parameters)
	}
	base.OutputParameter, base.Parameters = nil, nil
	switch x := b.(type) {
	case *NavigationBlock:
		x.TaskType, x.DataExtractionGoal, x.DataSchema, x.DownloadTimeout, x.IncludeExtractedText = "", "", nil, nil, nil
	case *ExtractionBlock:
		x.TaskType, x.NavigationGoal, x.DownloadTimeout, x.IncludeExtractedText = "", "", nil, nil
	case *TaskBlock:
		x.TaskType, x.DownloadTimeout, x.IncludeExtractedText = "", nil, nil
	case *ValidationBlock:
		x.TaskType, x.NavigationGoal, x.DataExtractionGoal, x.DataSchema = "", "", "", nil
		x.DownloadTimeout, x.IncludeExtractedText = nil, nil
	case *ActionBlock:
		x.TaskType, x.DataExtractionGoal, x.DataSchema, x.DownloadTimeout, x.IncludeExtractedText = "", "", nil, nil, nil
	case *LoginBlock:
		x.TaskType, x.DataExtractionGoal, x.DataSchema, x.DownloadTimeout, x.IncludeExtractedText = "", "", nil, nil, nil
	case *FileDownloadBlock:
		x.TaskType, x.DataExtractionGoal, x.DataSchema, x.IncludeExtractedText = "", "", nil, nil
	case *ForLoopBlock:
		if x.LoopOverParameterKey == "" {
			x.LoopOverParameterKey = keyOf(x.LoopOver)
		}
		x.LoopOver = nil
		x.LoopBlocks = definitionBlocks(x.LoopBlocks)
	case *WhileLoopBlock:
		x.LoopBlocks = definitionBlocks(x.LoopBlocks)
	case *ConditionalBlock:
		x.BranchConditions = slices.Clone(x.BranchConditions)
		for i := range x.BranchConditions {
			x.BranchConditions[i].ID = ""
		}
	case *SendEmailBlock:
		for _, f := range []struct {
			key *string
			rec **Parameter
		}{
			{&x.SMTPHostSecretParameterKey, &x.SMTPHost},
			{&x.SMTPPortSecretParameterKey, &x.SMTPPort},
			{&x.SMTPUsernameSecretParameterKey, &x.SMTPUsername},
			{&x.SMTPPasswordSecretParameterKey, &x.SMTPPassword},
		} {
			if *f.key == "" {
				*f.key = keyOf(*f.rec)
			}
			*f.rec = nil
		}
	}
	return b
}

// definition returns u without the response-side keys of a block:
// output_parameter is dropped and parameters (when it holds parameter
// records) becomes parameter_keys, unless parameter_keys is already set.
// Every other key keeps its value and position. Raw that is not a JSON
// object is returned unchanged.
func (u *UnknownBlock) definition() *UnknownBlock {
	members, err := jsonobject.Split(u.Raw)
	if err != nil {
		return u
	}
	hasKeys := false
	for _, m := range members {
		if m.Key == "parameter_keys" {
			var ks []string
			hasKeys = json.Unmarshal(m.Value, &ks) == nil && len(ks) > 0
		}
	}
	out := make([]jsonobject.Member, 0, len(members))
	for _, m := range members {
		switch m.Key {
		case "output_parameter":
			continue
		case "parameter_keys":
			if !hasKeys {
				continue // replaced by the converted parameters, or empty anyway
			}
		case "parameters":
			ps, ok := ParameterRecords(m.Value)
			if !ok {
				break // not parameter records: keep as is
			}
			if !hasKeys && len(ps) > 0 {
				ks, _ := json.Marshal(ParameterKeys(ps))
				out = append(out, jsonobject.Member{Key: "parameter_keys", Value: ks})
			}
			continue
		}
		out = append(out, m)
	}
	c := &UnknownBlock{Type: u.Type, Raw: jsonobject.Join(out)}
	_ = json.Unmarshal(c.Raw, &c.base)
	return c
}

// ParameterRecords decodes data, the "parameters" member of a block in the
// response shape, as the parameter records the service gives a block. ok
// is false when data is not a list of parameters that each have a key and
// a type: a member of that name that some block type uses for something
// else.
func ParameterRecords(data []byte) (ps []Parameter, ok bool) {
	if json.Unmarshal(data, &ps) != nil {
		return nil, false
	}
	for i := range ps {
		if ps[i].Key == "" || ps[i].ParameterType == "" {
			return nil, false
		}
	}
	return ps, true
}
