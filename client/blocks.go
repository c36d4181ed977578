package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
)

//go:generate go run ./internal/blockgen

// BlockType is the kind of a block of an agent definition (its
// "block_type"), the discriminator of the block union.
type BlockType string

// Block types. The constant BlockTypeX is the type of the struct XBlock:
// blocks_gen.go, written by go generate from these constants, gives each
// struct its BlockType and MarshalJSON methods and lists the types in
// BlockTypes, in this order.
const (
	BlockTypeNavigation        BlockType = "navigation"
	BlockTypeExtraction        BlockType = "extraction"
	BlockTypeTask              BlockType = "task"
	BlockTypeValidation        BlockType = "validation"
	BlockTypeTaskV2            BlockType = "task_v2"
	BlockTypeForLoop           BlockType = "for_loop"
	BlockTypeWhileLoop         BlockType = "while_loop"
	BlockTypeConditional       BlockType = "conditional"
	BlockTypeCode              BlockType = "code"
	BlockTypeTextPrompt        BlockType = "text_prompt"
	BlockTypeDownloadToS3      BlockType = "download_to_s3"
	BlockTypeUploadToS3        BlockType = "upload_to_s3"
	BlockTypeFileUpload        BlockType = "file_upload"
	BlockTypeSendEmail         BlockType = "send_email"
	BlockTypeFileURLParser     BlockType = "file_url_parser"
	BlockTypePDFParser         BlockType = "pdf_parser"
	BlockTypeAction            BlockType = "action"
	BlockTypeLogin             BlockType = "login"
	BlockTypeWait              BlockType = "wait"
	BlockTypeHumanInteraction  BlockType = "human_interaction"
	BlockTypeFileDownload      BlockType = "file_download"
	BlockTypeGotoURL           BlockType = "goto_url"
	BlockTypeHTTPRequest       BlockType = "http_request"
	BlockTypePrintPage         BlockType = "print_page"
	BlockTypeWorkflowTrigger   BlockType = "workflow_trigger"
	BlockTypeGoogleSheetsRead  BlockType = "google_sheets_read"
	BlockTypeGoogleSheetsWrite BlockType = "google_sheets_write"
	BlockTypePDFFill           BlockType = "pdf_fill"
	BlockTypeSplitPDF          BlockType = "split_pdf"
	BlockTypeEmailInbox        BlockType = "email_inbox"
)

// IsKnown reports whether t has a struct in this package; blocks of other
// types decode as *UnknownBlock.
func (t BlockType) IsKnown() bool { return newBlock(t) != nil }

// Block is one step of an agent definition: a pointer to one of the block
// structs of this package (*NavigationBlock, *ForLoopBlock, ...) or an
// *UnknownBlock. Blocks is the JSON form of a list of them.
type Block interface {
	// BlockType returns the value written as "block_type".
	BlockType() BlockType
	// Base gives access to the fields every block has.
	Base() *BlockBase
}

// BlockBase holds the fields common to every block type. The block structs
// embed it, so its fields read as theirs (b.Label) and Base returns it.
type BlockBase struct {
	// Label names the block: a Python identifier, unique in the definition.
	// The block's output is addressable as {{<label>_output}}.
	Label string `json:"label"`
	// NextBlockLabel overrides the sequential order (it makes the
	// definition version 2).
	NextBlockLabel             string `json:"next_block_label,omitempty"`
	ContinueOnFailure          bool   `json:"continue_on_failure,omitempty"`
	Model                      Model  `json:"model,omitempty"`
	IgnoreWorkflowSystemPrompt bool   `json:"ignore_workflow_system_prompt,omitempty"`
	// NextLoopOnFailure moves a loop to its next iteration when this block
	// fails; meaningful only inside loop_blocks.
	NextLoopOnFailure bool `json:"next_loop_on_failure,omitempty"`

	// OutputParameter (response only) is the "output" parameter the service
	// created for this block, keyed <label>_output.
	OutputParameter *Parameter `json:"output_parameter,omitempty"`
	// Parameters (response only) holds the full records of the parameters
	// the block uses; responses carry it instead of parameter_keys.
	// Agent.Definition turns it back into parameter_keys.
	Parameters []Parameter `json:"parameters,omitempty"`

	// missing lists the keys the service requires of this block type that
	// the decoded JSON did not have (or had as null); AgentDefinition.Validate
	// reports them. Built blocks and complete decoded ones have none.
	missing []string
}

// Base returns b itself; through embedding it is every block's Base method.
func (b *BlockBase) Base() *BlockBase { return b }

// Blocks is an ordered list of blocks, as in workflow_definition.blocks and
// loop_blocks. Decoding picks the struct from each element's "block_type";
// an unknown type becomes an *UnknownBlock that encodes back as it came.
type Blocks []Block

// MarshalJSON writes the blocks in order; a nil list is written as [],
// because the service requires the list.
func (bs Blocks) MarshalJSON() ([]byte, error) {
	buf := make([]byte, 0, 256*len(bs)+2)
	buf = append(buf, '[')
	for i, b := range bs {
		if i > 0 {
			buf = append(buf, ',')
		}
		if IsNilBlock(b) {
			return nil, fmt.Errorf("blocks[%d]: nil block", i)
		}
		data, err := marshalOne(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", blockPosition(i, b.BlockType(), b.Base().Label), err)
		}
		buf = append(buf, data...)
	}
	return append(buf, ']'), nil
}

// marshalOne encodes one block. Every block type has its own MarshalJSON,
// called directly rather than through json.Marshal: the encoder that called
// Blocks.MarshalJSON checks and compacts the list once, and each nested
// json.Marshal would scan the block's bytes again.
func marshalOne(b Block) ([]byte, error) {
	if m, ok := b.(json.Marshaler); ok {
		return m.MarshalJSON()
	}
	return json.Marshal(b)
}

// UnmarshalJSON decodes each element into the struct of its block_type.
// Errors name the element: blocks[3] (navigation "Fill_form"): ...
func (bs *Blocks) UnmarshalJSON(data []byte) error {
	if isJSONNull(data) {
		*bs = nil
		return nil
	}
	// Splitting by hand saves two passes of encoding/json over every block
	// (half the decoding time of a large agent). Each element is still
	// validated by its own decode; anything the splitter does not expect
	// goes through encoding/json, which reports the error properly.
	elems, ok := splitArray(data)
	if !ok {
		var raws []json.RawMessage
		if err := json.Unmarshal(data, &raws); err != nil {
			return fmt.Errorf("blocks: %w", err)
		}
		elems = make([][]byte, len(raws))
		for i := range raws {
			elems[i] = raws[i]
		}
	}
	out := make(Blocks, len(elems))
	for i, raw := range elems {
		b, err := decodeBlock(i, raw)
		if err != nil {
			return err
		}
		out[i] = b
	}
	*bs = out
	return nil
}

// decodeBlock decodes one element of a block list. raw is not retained.
func decodeBlock(i int, raw []byte) (Block, error) {
	typeValue, found, ok := findBlockType(raw)
	if !ok {
		var head struct {
			BlockType json.RawMessage `json:"block_type"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return nil, fmt.Errorf("blocks[%d]: %w", i, err)
		}
		typeValue, found = head.BlockType, head.BlockType != nil
	}
	if !found {
		return nil, fmt.Errorf("blocks[%d]: block_type is missing", i)
	}
	var name string
	if isJSONNull(typeValue) || json.Unmarshal(typeValue, &name) != nil {
		return nil, fmt.Errorf("blocks[%d]: block_type must be a string, got %s", i, truncateForError(typeValue))
	}
	if name == "" {
		return nil, fmt.Errorf("blocks[%d]: block_type is empty", i)
	}
	t := BlockType(name)
	b := newBlock(t)
	if b == nil {
		if !json.Valid(raw) {
			return nil, fmt.Errorf("blocks[%d] (%s): invalid JSON", i, t)
		}
		u := &UnknownBlock{Type: t, Raw: append(json.RawMessage(nil), raw...)}
		// The common fields are a convenience view; a block of a newer
		// type whose common fields do not fit BlockBase still round-trips.
		_ = json.Unmarshal(raw, &u.base)
		return u, nil
	}
	if err := json.Unmarshal(raw, b); err != nil {
		return nil, fmt.Errorf("%s: %w", blockPosition(i, t, peekLabel(raw)), err)
	}
	if keys := requiredKeys[t]; keys != nil {
		b.Base().missing = missingKeys(raw, keys)
	}
	return b, nil
}

// requiredKeys are the keys, besides label, that the service's definition
// schema (the *BlockYAML schemas) requires of a block type: a definition
// without them is refused at creation. The block structs always write
// them, so an agent fetched and sent back keeps them. Two are left out on
// purpose, because the local engine runs the block without them: an
// extraction's data_extraction_goal (a data_schema says what to extract)
// and a file_download's navigation_goal (its url starts the download).
var requiredKeys = map[BlockType][]string{
	BlockTypeCode:              {"code"},
	BlockTypeDownloadToS3:      {"url"},
	BlockTypeEmailInbox:        {"email_client"},
	BlockTypeFileURLParser:     {"file_url"},
	BlockTypeForLoop:           {"loop_blocks"},
	BlockTypeGoogleSheetsRead:  {"spreadsheet_url"},
	BlockTypeGoogleSheetsWrite: {"spreadsheet_url"},
	BlockTypeGotoURL:           {"url"},
	BlockTypeHumanInteraction:  {"recipients"},
	BlockTypeNavigation:        {"navigation_goal"},
	BlockTypePDFFill:           {"file_url", "prompt"},
	BlockTypePDFParser:         {"file_url"},
	BlockTypeSendEmail:         {"sender", "recipients", "subject", "body"},
	BlockTypeSplitPDF:          {"file_url", "prompt"},
	BlockTypeTaskV2:            {"prompt"},
	BlockTypeTextPrompt:        {"prompt"},
	BlockTypeWhileLoop:         {"loop_blocks", "condition"},
	BlockTypeWorkflowTrigger:   {"workflow_permanent_id"},
}

// missingKeys returns those of keys that the JSON object raw lacks or
// holds as null, nil when it has them all.
func missingKeys(raw []byte, keys []string) []string {
	have := make([]bool, len(keys))
	mark := func(k string, v []byte) {
		if i := slices.Index(keys, k); i >= 0 {
			have[i] = !isJSONNull(v)
		}
	}
	if !eachMember(raw, func(k, v []byte) { mark(string(k), v) }) {
		// Keys with escapes: the slow way.
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return nil // the typed decoding accepted it; nothing to add
		}
		clear(have)
		for k, v := range m {
			mark(k, v)
		}
	}
	var missing []string
	for i, ok := range have {
		if !ok {
			missing = append(missing, keys[i])
		}
	}
	return missing
}

func blockPosition(i int, t BlockType, label string) string {
	if label == "" {
		return fmt.Sprintf("blocks[%d] (%s)", i, t)
	}
	return fmt.Sprintf("blocks[%d] (%s %q)", i, t, label)
}

// peekLabel returns the block's label if it is a string, for error messages.
func peekLabel(raw []byte) string {
	var head struct {
		Label json.RawMessage `json:"label"`
	}
	var label string
	if json.Unmarshal(raw, &head) == nil && head.Label != nil {
		_ = json.Unmarshal(head.Label, &label)
	}
	return label
}

// BlockParameterKeys returns the address of b's ParameterKeys field (its
// parameter_keys), or nil when b's type has no such field. An UnknownBlock
// has none: its keys are in its JSON.
func BlockParameterKeys(b Block) *[]string {
	if IsNilBlock(b) {
		return nil
	}
	return parameterKeysField(b)
}

// IsNilBlock reports whether b holds no block: it is nil, or a nil pointer
// of a block type. Encoding a Blocks with such an entry fails, and
// Blocks.Walk skips it.
func IsNilBlock(b Block) bool {
	if b == nil {
		return true
	}
	v := reflect.ValueOf(b)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// splitArray returns the elements of the JSON array in data, or ok false
// when data does not look like one. It checks structure only (brackets,
// strings, separators); the caller validates each element.
func splitArray(data []byte) (elems [][]byte, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return [][]byte{}, skipSpace(data, i+1) == len(data)
	}
	for {
		end := skipValue(data, i)
		if end < 0 {
			return nil, false
		}
		elems = append(elems, data[i:end])
		i = skipSpace(data, end)
		if i >= len(data) {
			return nil, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case ']':
			return elems, skipSpace(data, i+1) == len(data)
		default:
			return nil, false
		}
	}
}

// findBlockType returns the raw value of the "block_type" member of the
// JSON object in data (the last one, as encoding/json would), whether there
// is one, and ok false when data does not look like an object or has a key
// with escapes, which only encoding/json can compare.
func findBlockType(data []byte) (value []byte, found, ok bool) {
	ok = eachMember(data, func(key, v []byte) {
		if string(key) == "block_type" {
			value, found = v, true
		}
	})
	if !ok {
		return nil, false, false
	}
	return value, found, true
}

// eachMember calls fn with the key and the raw value of each member of the
// JSON object in data, in order. It returns false when data does not look
// like an object or has a key with escapes, which only encoding/json can
// compare; fn may have been called for members before the problem.
func eachMember(data []byte, fn func(key, value []byte)) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return true
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return false
		}
		keyEnd := skipString(data, i)
		if keyEnd < 0 {
			return false
		}
		key := data[i+1 : keyEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		i = skipSpace(data, keyEnd)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = skipSpace(data, i+1)
		end := skipValue(data, i)
		if end < 0 {
			return false
		}
		fn(key, data[i:end])
		i = skipSpace(data, end)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return true
		default:
			return false
		}
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just after the string that starts at
// data[i] (a '"'), or -1 if it is not terminated.
func skipString(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index just after the JSON value that starts at
// data[i], or -1 if its structure is broken. Literals are not checked.
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				if i = skipString(data, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	case '}', ']', ',', ':':
		return -1
	}
	start := i
	for i < len(data) {
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			if i == start {
				return -1
			}
			return i
		}
		i++
	}
	return i
}

// marshalBlock writes {"block_type": t, <the fields of v>}. v must encode as
// a JSON object and must not have a method MarshalJSON of its own (pass a
// conversion to a method-less type).
func marshalBlock(t BlockType, v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(body) < 2 || body[0] != '{' {
		return nil, fmt.Errorf("client: block %s did not encode as an object", t)
	}
	name, err := json.Marshal(string(t))
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 0, len(body)+len(name)+16)
	buf = append(buf, `{"block_type":`...)
	buf = append(buf, name...)
	if len(body) > 2 {
		buf = append(buf, ',')
		return append(buf, body[1:]...), nil
	}
	return append(buf, '}'), nil
}

// UnknownBlock is a block whose block_type this package does not know,
// typically one the service added after this package was written. It keeps
// the block's JSON object in Raw and MarshalJSON writes Raw back unchanged,
// so fetching an agent and sending it back never loses such a block.
type UnknownBlock struct {
	Type BlockType       // the block_type as read
	Raw  json.RawMessage // the whole block object, block_type included

	base BlockBase
}

// BlockType returns u.Type.
func (u *UnknownBlock) BlockType() BlockType { return u.Type }

// Base returns the common fields as decoded from Raw when the block was
// decoded. It is a read-only view: MarshalJSON writes Raw, never Base, so
// edit Raw to change the block. For an UnknownBlock built by hand it is
// empty.
func (u *UnknownBlock) Base() *BlockBase { return &u.base }

// MarshalJSON writes Raw as it came, or {"block_type": Type} when Raw is
// empty.
func (u UnknownBlock) MarshalJSON() ([]byte, error) {
	if len(bytes.TrimSpace(u.Raw)) == 0 {
		if u.Type == "" {
			return nil, errors.New("client: UnknownBlock with neither Type nor Raw")
		}
		return marshalBlock(u.Type, struct{}{})
	}
	return u.Raw, nil
}

// BranchCriteria is a condition: a Jinja2 template that must render truthy,
// or a natural-language prompt the model judges.
type BranchCriteria struct {
	CriteriaType string `json:"criteria_type,omitempty"` // "jinja2_template" (default) or "prompt"
	Expression   string `json:"expression"`
	Description  string `json:"description,omitempty"`
}

// BranchCondition is one branch of a conditional block. Exactly one branch
// may be the default, and it has no criteria.
type BranchCondition struct {
	// Criteria is kept as JSON so that criteria shapes newer than
	// BranchCriteria pass through; it decodes into a BranchCriteria.
	Criteria       json.RawMessage `json:"criteria,omitempty"`
	NextBlockLabel string          `json:"next_block_label,omitempty"`
	Description    string          `json:"description,omitempty"`
	IsDefault      bool            `json:"is_default,omitempty"`

	ID string `json:"id,omitempty"` // response only: the branch id the service assigns
}

// CodeBlockStep is one entry of a code block's plain-language outline. The
// service rebuilds the outline from the code on save.
type CodeBlockStep struct {
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	ActionType  string `json:"action_type,omitempty"` // default "null_action"
	LineStart   *int   `json:"line_start,omitempty"`
	LineEnd     *int   `json:"line_end,omitempty"`
}

// NavigationBlock has the agent reach a goal on a web page (fill a form,
// click through pages).
type NavigationBlock struct {
	BlockBase
	NavigationGoal                     string            `json:"navigation_goal"`
	URL                                string            `json:"url,omitempty"` // may hold a {{parameter_key}} placeholder
	Title                              string            `json:"title,omitempty"`
	Engine                             RunEngine         `json:"engine,omitempty"`
	ErrorCodeMapping                   map[string]string `json:"error_code_mapping,omitempty"`
	MaxRetries                         int               `json:"max_retries,omitempty"`
	MaxStepsPerRun                     *int              `json:"max_steps_per_run,omitempty"`
	ParameterKeys                      []string          `json:"parameter_keys,omitempty"`
	CompleteOnDownload                 bool              `json:"complete_on_download,omitempty"`
	DownloadSuffix                     string            `json:"download_suffix,omitempty"` // Deprecated: sets the whole file name.
	TOTPVerificationURL                string            `json:"totp_verification_url,omitempty"`
	TOTPIdentifier                     string            `json:"totp_identifier,omitempty"`
	DisableCache                       bool              `json:"disable_cache,omitempty"`
	CompleteCriterion                  string            `json:"complete_criterion,omitempty"`
	TerminateCriterion                 string            `json:"terminate_criterion,omitempty"`
	CompleteVerification               *bool             `json:"complete_verification,omitempty"` // default true
	IncludeActionHistoryInVerification bool              `json:"include_action_history_in_verification,omitempty"`
	CompleteCriterionIsUntrusted       bool              `json:"complete_criterion_is_untrusted,omitempty"`

	// Response only.
	TaskType             string          `json:"task_type,omitempty"`
	DataExtractionGoal   string          `json:"data_extraction_goal,omitempty"`
	DataSchema           json.RawMessage `json:"data_schema,omitempty"`
	DownloadTimeout      *float64        `json:"download_timeout,omitempty"`
	IncludeExtractedText *bool           `json:"include_extracted_text,omitempty"`
}

// ExtractionBlock extracts data from the current page.
type ExtractionBlock struct {
	BlockBase
	DataExtractionGoal string          `json:"data_extraction_goal"`
	URL                string          `json:"url,omitempty"`
	Title              string          `json:"title,omitempty"`
	Engine             RunEngine       `json:"engine,omitempty"`
	DataSchema         json.RawMessage `json:"data_schema,omitempty"` // a JSON Schema: object, array or string
	MaxRetries         int             `json:"max_retries,omitempty"`
	MaxStepsPerRun     *int            `json:"max_steps_per_run,omitempty"`
	ParameterKeys      []string        `json:"parameter_keys,omitempty"`
	DisableCache       bool            `json:"disable_cache,omitempty"`

	// Response only.
	TaskType             string   `json:"task_type,omitempty"`
	NavigationGoal       string   `json:"navigation_goal,omitempty"`
	DownloadTimeout      *float64 `json:"download_timeout,omitempty"`
	IncludeExtractedText *bool    `json:"include_extracted_text,omitempty"`
}

// TaskBlock navigates and extracts in one block (the older general form of
// navigation plus extraction).
type TaskBlock struct {
	BlockBase
	URL                                string            `json:"url,omitempty"`
	Title                              string            `json:"title,omitempty"`
	Engine                             RunEngine         `json:"engine,omitempty"`
	NavigationGoal                     string            `json:"navigation_goal,omitempty"`
	DataExtractionGoal                 string            `json:"data_extraction_goal,omitempty"`
	DataSchema                         json.RawMessage   `json:"data_schema,omitempty"`
	ErrorCodeMapping                   map[string]string `json:"error_code_mapping,omitempty"`
	MaxRetries                         int               `json:"max_retries,omitempty"`
	MaxStepsPerRun                     *int              `json:"max_steps_per_run,omitempty"`
	ParameterKeys                      []string          `json:"parameter_keys,omitempty"`
	CompleteOnDownload                 bool              `json:"complete_on_download,omitempty"`
	DownloadSuffix                     string            `json:"download_suffix,omitempty"` // Deprecated: sets the whole file name.
	TOTPVerificationURL                string            `json:"totp_verification_url,omitempty"`
	TOTPIdentifier                     string            `json:"totp_identifier,omitempty"`
	DisableCache                       bool              `json:"disable_cache,omitempty"`
	CompleteCriterion                  string            `json:"complete_criterion,omitempty"`
	TerminateCriterion                 string            `json:"terminate_criterion,omitempty"`
	CompleteVerification               *bool             `json:"complete_verification,omitempty"` // default true
	IncludeActionHistoryInVerification bool              `json:"include_action_history_in_verification,omitempty"`
	// Prompt is listed by the contract and used by the documentation's
	// examples, but the hosted service has no such field on task blocks and
	// drops it; set NavigationGoal for the hosted service.
	Prompt string `json:"prompt,omitempty"`

	// Response only.
	TaskType             string   `json:"task_type,omitempty"`
	DownloadTimeout      *float64 `json:"download_timeout,omitempty"`
	IncludeExtractedText *bool    `json:"include_extracted_text,omitempty"`
}

// ValidationBlock checks the page against criteria and completes or
// terminates the run accordingly.
type ValidationBlock struct {
	BlockBase
	CompleteCriterion      string            `json:"complete_criterion,omitempty"`
	TerminateCriterion     string            `json:"terminate_criterion,omitempty"`
	ErrorCodeMapping       map[string]string `json:"error_code_mapping,omitempty"`
	ParameterKeys          []string          `json:"parameter_keys,omitempty"`
	DisableCache           bool              `json:"disable_cache,omitempty"`
	WithoutPageInformation bool              `json:"without_page_information,omitempty"`
	Engine                 RunEngine         `json:"engine,omitempty"`
	MaxStepsPerRun         *int              `json:"max_steps_per_run,omitempty"`

	// Response only.
	TaskType             string          `json:"task_type,omitempty"`
	NavigationGoal       string          `json:"navigation_goal,omitempty"`
	DataExtractionGoal   string          `json:"data_extraction_goal,omitempty"`
	DataSchema           json.RawMessage `json:"data_schema,omitempty"`
	DownloadTimeout      *float64        `json:"download_timeout,omitempty"`
	IncludeExtractedText *bool           `json:"include_extracted_text,omitempty"`
}

// TaskV2Block runs a task-v2 agent from a prompt.
type TaskV2Block struct {
	BlockBase
	Prompt              string `json:"prompt"`
	URL                 string `json:"url,omitempty"`
	TOTPVerificationURL string `json:"totp_verification_url,omitempty"`
	TOTPIdentifier      string `json:"totp_identifier,omitempty"`
	MaxIterations       int    `json:"max_iterations,omitempty"` // 0 means the default (50)
	MaxSteps            int    `json:"max_steps,omitempty"`      // 0 means the default (25)
	DisableCache        bool   `json:"disable_cache,omitempty"`
}

// ForLoopBlock runs LoopBlocks once per element of a list parameter.
type ForLoopBlock struct {
	BlockBase
	LoopBlocks            Blocks          `json:"loop_blocks"` // required; nil is written as []
	LoopOverParameterKey  string          `json:"loop_over_parameter_key,omitempty"`
	LoopVariableReference string          `json:"loop_variable_reference,omitempty"`
	CompleteIfEmpty       bool            `json:"complete_if_empty,omitempty"`
	DataSchema            json.RawMessage `json:"data_schema,omitempty"`

	// LoopOver (response only) is the record of the parameter looped over;
	// responses carry it instead of loop_over_parameter_key.
	LoopOver *Parameter `json:"loop_over,omitempty"`
}

// WhileLoopBlock runs LoopBlocks while Condition holds.
type WhileLoopBlock struct {
	BlockBase
	LoopBlocks Blocks         `json:"loop_blocks"` // required; nil is written as []
	Condition  BranchCriteria `json:"condition"`
}

// ConditionalBlock jumps to the next_block_label of the first branch whose
// criteria hold, or of the default branch. It makes the definition
// version 2.
type ConditionalBlock struct {
	BlockBase
	BranchConditions []BranchCondition `json:"branch_conditions,omitempty"`
}

// CodeBlock runs Python code.
type CodeBlock struct {
	BlockBase
	Code             string            `json:"code"`
	ParameterKeys    []string          `json:"parameter_keys,omitempty"`
	ErrorCodeMapping map[string]string `json:"error_code_mapping,omitempty"`
	Prompt           string            `json:"prompt,omitempty"` // the plain-language goal shown in the editor
	Steps            []CodeBlockStep   `json:"steps,omitempty"`
}

// TextPromptBlock sends a prompt to a language model, without a browser.
type TextPromptBlock struct {
	BlockBase
	Prompt        string          `json:"prompt"`
	LLMKey        string          `json:"llm_key,omitempty"`
	ParameterKeys []string        `json:"parameter_keys,omitempty"`
	JSONSchema    json.RawMessage `json:"json_schema,omitempty"`
}

// DownloadToS3Block downloads a URL into the service's storage.
type DownloadToS3Block struct {
	BlockBase
	URL string `json:"url"`
}

// UploadToS3Block uploads the run's files to the service's storage.
type UploadToS3Block struct {
	BlockBase
	Path string `json:"path,omitempty"`
}

// FileUploadBlock uploads the run's downloaded files to the user's storage:
// S3, Azure Blob, Google Drive or SFTP.
type FileUploadBlock struct {
	BlockBase
	StorageType              string `json:"storage_type,omitempty"` // s3 (default), azure, google_drive, sftp
	S3Bucket                 string `json:"s3_bucket,omitempty"`
	AWSAccessKeyID           string `json:"aws_access_key_id,omitempty"`
	AWSSecretAccessKey       string `json:"aws_secret_access_key,omitempty"`
	RegionName               string `json:"region_name,omitempty"`
	AzureStorageAccountName  string `json:"azure_storage_account_name,omitempty"`
	AzureStorageAccountKey   string `json:"azure_storage_account_key,omitempty"`
	AzureBlobContainerName   string `json:"azure_blob_container_name,omitempty"`
	AzureFolderPath          string `json:"azure_folder_path,omitempty"`
	GoogleCredentialID       string `json:"google_credential_id,omitempty"`
	GoogleDriveFolderID      string `json:"google_drive_folder_id,omitempty"`
	SFTPHost                 string `json:"sftp_host,omitempty"`
	SFTPPort                 *int   `json:"sftp_port,omitempty"`
	SFTPUsername             string `json:"sftp_username,omitempty"`
	SFTPPassword             string `json:"sftp_password,omitempty"`
	SFTPPrivateKey           string `json:"sftp_private_key,omitempty"`
	SFTPPrivateKeyPassphrase string `json:"sftp_private_key_passphrase,omitempty"`
	SFTPRemotePath           string `json:"sftp_remote_path,omitempty"`
	SFTPHostKey              string `json:"sftp_host_key,omitempty"`
	Prompt                   string `json:"prompt,omitempty"` // which files to upload; empty means all
	Path                     string `json:"path,omitempty"`
}

// SendEmailBlock sends an email, through the service's SMTP server, SMTP
// settings held in aws_secret parameters, or a custom SMTP server.
type SendEmailBlock struct {
	BlockBase
	Sender                         string   `json:"sender"`
	Recipients                     []string `json:"recipients"`
	Subject                        string   `json:"subject"`
	Body                           string   `json:"body"`
	FileAttachments                []string `json:"file_attachments,omitempty"`
	SMTPHostSecretParameterKey     string   `json:"smtp_host_secret_parameter_key,omitempty"`
	SMTPPortSecretParameterKey     string   `json:"smtp_port_secret_parameter_key,omitempty"`
	SMTPUsernameSecretParameterKey string   `json:"smtp_username_secret_parameter_key,omitempty"`
	SMTPPasswordSecretParameterKey string   `json:"smtp_password_secret_parameter_key,omitempty"`
	CustomSMTPHost                 string   `json:"custom_smtp_host,omitempty"`
	CustomSMTPPort                 int      `json:"custom_smtp_port,omitempty"` // 1 to 65535
	CustomSMTPUsername             string   `json:"custom_smtp_username,omitempty"`
	CustomSMTPPassword             string   `json:"custom_smtp_password,omitempty"`

	// Response only: the aws_secret parameter records the responses carry
	// instead of the smtp_*_secret_parameter_key fields.
	SMTPHost     *Parameter `json:"smtp_host,omitempty"`
	SMTPPort     *Parameter `json:"smtp_port,omitempty"`
	SMTPUsername *Parameter `json:"smtp_username,omitempty"`
	SMTPPassword *Parameter `json:"smtp_password,omitempty"`
}

// FileURLParserBlock parses a file (CSV, Excel, PDF, image, DOCX, ZIP) from
// a URL.
type FileURLParserBlock struct {
	BlockBase
	FileURL    string          `json:"file_url"`
	FileType   string          `json:"file_type,omitempty"` // auto_detect (default), csv, excel, pdf, image, docx, zip
	JSONSchema json.RawMessage `json:"json_schema,omitempty"`
}

// PDFParserBlock parses a PDF from a URL.
type PDFParserBlock struct {
	BlockBase
	FileURL    string          `json:"file_url"`
	JSONSchema json.RawMessage `json:"json_schema,omitempty"`
}

// ActionBlock performs a single action on the page.
type ActionBlock struct {
	BlockBase
	URL            string    `json:"url,omitempty"`
	Title          string    `json:"title,omitempty"`
	Engine         RunEngine `json:"engine,omitempty"`
	NavigationGoal string    `json:"navigation_goal,omitempty"`
	Selector       string    `json:"selector,omitempty"` // a CSS or XPath selector
	// AIFallback says how Selector and the model combine: "fallback"
	// (default: try the selector, then the model) or "proactive" (the model
	// decides; the selector is a hint). Unlike the agent-level ai_fallback
	// it is not a bool.
	AIFallback          string            `json:"ai_fallback,omitempty"`
	ErrorCodeMapping    map[string]string `json:"error_code_mapping,omitempty"`
	MaxRetries          int               `json:"max_retries,omitempty"`
	ParameterKeys       []string          `json:"parameter_keys,omitempty"`
	CompleteOnDownload  bool              `json:"complete_on_download,omitempty"`
	DownloadSuffix      string            `json:"download_suffix,omitempty"` // Deprecated: sets the whole file name.
	TOTPVerificationURL string            `json:"totp_verification_url,omitempty"`
	TOTPIdentifier      string            `json:"totp_identifier,omitempty"`
	DisableCache        bool              `json:"disable_cache,omitempty"`
	MaxStepsPerRun      *int              `json:"max_steps_per_run,omitempty"`

	// Response only.
	TaskType             string          `json:"task_type,omitempty"`
	DataExtractionGoal   string          `json:"data_extraction_goal,omitempty"`
	DataSchema           json.RawMessage `json:"data_schema,omitempty"`
	DownloadTimeout      *float64        `json:"download_timeout,omitempty"`
	IncludeExtractedText *bool           `json:"include_extracted_text,omitempty"`
}

// LoginBlock logs in to a site, typically with a credential parameter.
type LoginBlock struct {
	BlockBase
	URL                                string            `json:"url,omitempty"`
	Title                              string            `json:"title,omitempty"`
	Engine                             RunEngine         `json:"engine,omitempty"`
	NavigationGoal                     string            `json:"navigation_goal,omitempty"`
	ErrorCodeMapping                   map[string]string `json:"error_code_mapping,omitempty"`
	MaxRetries                         int               `json:"max_retries,omitempty"`
	MaxStepsPerRun                     *int              `json:"max_steps_per_run,omitempty"`
	ParameterKeys                      []string          `json:"parameter_keys,omitempty"`
	TOTPVerificationURL                string            `json:"totp_verification_url,omitempty"`
	TOTPIdentifier                     string            `json:"totp_identifier,omitempty"`
	DisableCache                       bool              `json:"disable_cache,omitempty"`
	CompleteCriterion                  string            `json:"complete_criterion,omitempty"`
	TerminateCriterion                 string            `json:"terminate_criterion,omitempty"`
	CompleteVerification               *bool             `json:"complete_verification,omitempty"` // default true
	SkipSavedProfile                   bool              `json:"skip_saved_profile,omitempty"`
	IncludeActionHistoryInVerification bool              `json:"include_action_history_in_verification,omitempty"`

	// Response only.
	TaskType             string          `json:"task_type,omitempty"`
	DataExtractionGoal   string          `json:"data_extraction_goal,omitempty"`
	DataSchema           json.RawMessage `json:"data_schema,omitempty"`
	DownloadTimeout      *float64        `json:"download_timeout,omitempty"`
	IncludeExtractedText *bool           `json:"include_extracted_text,omitempty"`
}

// WaitBlock pauses the run.
type WaitBlock struct {
	BlockBase
	WaitSec int `json:"wait_sec,omitempty"`
}

// HumanInteractionBlock pauses the run (status "paused") until a person
// approves or rejects it by email.
type HumanInteractionBlock struct {
	BlockBase
	Recipients         []string `json:"recipients"`
	Instructions       string   `json:"instructions,omitempty"`
	PositiveDescriptor string   `json:"positive_descriptor,omitempty"` // default "Approve"
	NegativeDescriptor string   `json:"negative_descriptor,omitempty"` // default "Reject"
	TimeoutSeconds     int      `json:"timeout_seconds,omitempty"`     // 0 means the default (7200)
	Sender             string   `json:"sender,omitempty"`
	Subject            string   `json:"subject,omitempty"`
	Body               string   `json:"body,omitempty"`
}

// FileDownloadBlock navigates to download a file, and optionally stores it
// in the user's storage (DownloadTarget and the storage fields, which are
// those of FileUploadBlock).
type FileDownloadBlock struct {
	BlockBase
	NavigationGoal           string            `json:"navigation_goal"`
	URL                      string            `json:"url,omitempty"`
	Title                    string            `json:"title,omitempty"`
	Engine                   RunEngine         `json:"engine,omitempty"`
	ErrorCodeMapping         map[string]string `json:"error_code_mapping,omitempty"`
	MaxRetries               int               `json:"max_retries,omitempty"`
	MaxStepsPerRun           *int              `json:"max_steps_per_run,omitempty"`
	ParameterKeys            []string          `json:"parameter_keys,omitempty"`
	DownloadSuffix           string            `json:"download_suffix,omitempty"` // Deprecated: sets the whole file name.
	TOTPVerificationURL      string            `json:"totp_verification_url,omitempty"`
	TOTPIdentifier           string            `json:"totp_identifier,omitempty"`
	DisableCache             bool              `json:"disable_cache,omitempty"`
	DownloadTimeout          *float64          `json:"download_timeout,omitempty"` // seconds
	DownloadTarget           string            `json:"download_target,omitempty"`  // website (default), s3, azure, google_drive, sftp
	S3Bucket                 string            `json:"s3_bucket,omitempty"`
	AWSAccessKeyID           string            `json:"aws_access_key_id,omitempty"`
	AWSSecretAccessKey       string            `json:"aws_secret_access_key,omitempty"`
	RegionName               string            `json:"region_name,omitempty"`
	AzureStorageAccountName  string            `json:"azure_storage_account_name,omitempty"`
	AzureStorageAccountKey   string            `json:"azure_storage_account_key,omitempty"`
	AzureBlobContainerName   string            `json:"azure_blob_container_name,omitempty"`
	GoogleCredentialID       string            `json:"google_credential_id,omitempty"`
	GoogleDriveFolderID      string            `json:"google_drive_folder_id,omitempty"`
	SFTPHost                 string            `json:"sftp_host,omitempty"`
	SFTPPort                 *int              `json:"sftp_port,omitempty"`
	SFTPUsername             string            `json:"sftp_username,omitempty"`
	SFTPPassword             string            `json:"sftp_password,omitempty"`
	SFTPPrivateKey           string            `json:"sftp_private_key,omitempty"`
	SFTPPrivateKeyPassphrase string            `json:"sftp_private_key_passphrase,omitempty"`
	SFTPRemotePath           string            `json:"sftp_remote_path,omitempty"`
	SFTPHostKey              string            `json:"sftp_host_key,omitempty"`
	Path                     string            `json:"path,omitempty"`
	Prompt                   string            `json:"prompt,omitempty"`
	ContinueOnEmpty          bool              `json:"continue_on_empty,omitempty"`

	// Response only.
	TaskType             string          `json:"task_type,omitempty"`
	DataExtractionGoal   string          `json:"data_extraction_goal,omitempty"`
	DataSchema           json.RawMessage `json:"data_schema,omitempty"`
	IncludeExtractedText *bool           `json:"include_extracted_text,omitempty"`
}

// GotoURLBlock opens a URL in the run's browser.
type GotoURLBlock struct {
	BlockBase
	URL string `json:"url"`
}

// HTTPRequestBlock makes an HTTP request from the service.
type HTTPRequestBlock struct {
	BlockBase
	Method              string          `json:"method,omitempty"` // default GET
	URL                 string          `json:"url,omitempty"`
	Headers             json.RawMessage `json:"headers,omitempty"` // object of strings
	Body                json.RawMessage `json:"body,omitempty"`    // object
	Files               json.RawMessage `json:"files,omitempty"`   // multipart field name -> file path or URL
	Timeout             int             `json:"timeout,omitempty"` // seconds; 0 means the default (30)
	FollowRedirects     *bool           `json:"follow_redirects,omitempty"`
	DownloadFilename    string          `json:"download_filename,omitempty"`
	SaveResponseAsFile  bool            `json:"save_response_as_file,omitempty"`
	SecretResponsePaths []string        `json:"secret_response_paths,omitempty"`
	ParameterKeys       []string        `json:"parameter_keys,omitempty"`
}

// PrintPageBlock saves the current page as a PDF.
type PrintPageBlock struct {
	BlockBase
	IncludeTimestamp *bool    `json:"include_timestamp,omitempty"`
	CustomFilename   string   `json:"custom_filename,omitempty"`
	Format           string   `json:"format,omitempty"` // A4 (default), Letter, Legal, Tabloid
	Landscape        bool     `json:"landscape,omitempty"`
	PrintBackground  *bool    `json:"print_background,omitempty"`
	ParameterKeys    []string `json:"parameter_keys,omitempty"`
}

// WorkflowTriggerBlock runs another agent.
type WorkflowTriggerBlock struct {
	BlockBase
	WorkflowPermanentID     string          `json:"workflow_permanent_id"`
	Payload                 json.RawMessage `json:"payload,omitempty"` // the child run's parameters
	WaitForCompletion       *bool           `json:"wait_for_completion,omitempty"`
	BrowserSessionID        string          `json:"browser_session_id,omitempty"`
	UseParentBrowserSession bool            `json:"use_parent_browser_session,omitempty"`
	ParameterKeys           []string        `json:"parameter_keys,omitempty"`
}

// GoogleSheetsReadBlock reads rows from a Google sheet.
type GoogleSheetsReadBlock struct {
	BlockBase
	SpreadsheetURL string   `json:"spreadsheet_url"`
	SheetName      string   `json:"sheet_name,omitempty"`
	Range          string   `json:"range,omitempty"`
	CredentialID   string   `json:"credential_id,omitempty"`
	HasHeaderRow   *bool    `json:"has_header_row,omitempty"`
	ParameterKeys  []string `json:"parameter_keys,omitempty"`
}

// GoogleSheetsWriteBlock writes rows to a Google sheet.
type GoogleSheetsWriteBlock struct {
	BlockBase
	SpreadsheetURL       string          `json:"spreadsheet_url"`
	SheetName            string          `json:"sheet_name,omitempty"`
	Range                string          `json:"range,omitempty"`
	CredentialID         string          `json:"credential_id,omitempty"`
	WriteMode            string          `json:"write_mode,omitempty"` // append (default) or update
	Values               string          `json:"values,omitempty"`
	ColumnMapping        json.RawMessage `json:"column_mapping,omitempty"`
	CreateSheetIfMissing bool            `json:"create_sheet_if_missing,omitempty"`
	ParameterKeys        []string        `json:"parameter_keys,omitempty"`
}

// PDFFillBlock fills a PDF form.
type PDFFillBlock struct {
	BlockBase
	FileURL       string          `json:"file_url"`
	Prompt        string          `json:"prompt"`
	Payload       json.RawMessage `json:"payload,omitempty"`
	LLMKey        string          `json:"llm_key,omitempty"`
	ParameterKeys []string        `json:"parameter_keys,omitempty"`
}

// SplitPDFBlock splits a PDF into parts.
type SplitPDFBlock struct {
	BlockBase
	FileURL       string   `json:"file_url"`
	Prompt        string   `json:"prompt"`
	LLMKey        string   `json:"llm_key,omitempty"`
	ParameterKeys []string `json:"parameter_keys,omitempty"`
}

// EmailInboxBlock reads messages from a Gmail or Outlook inbox.
type EmailInboxBlock struct {
	BlockBase
	EmailClient   string   `json:"email_client"` // gmail or outlook
	CredentialID  string   `json:"credential_id,omitempty"`
	Folder        string   `json:"folder,omitempty"`
	Prompt        string   `json:"prompt,omitempty"`
	Sender        string   `json:"sender,omitempty"`
	Subject       string   `json:"subject,omitempty"`
	NewerThanDays *int     `json:"newer_than_days,omitempty"`
	MaxResults    int      `json:"max_results,omitempty"` // 0 means the default (25)
	IncludeBody   *bool    `json:"include_body,omitempty"`
	ParameterKeys []string `json:"parameter_keys,omitempty"`
}
