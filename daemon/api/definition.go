package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/yamljson"
)

// readDefinition reads an agent create or update body in any of the forms
// the daemon accepts:
//
//   - {"json_definition": {...}} or {"yaml_definition": "..."}, what the
//     hosted service and its official clients send (yaml wins when both are);
//   - a bare definition object with Content-Type application/json;
//   - a YAML definition as the body, with Content-Type text/plain,
//     application/yaml or application/x-yaml.
//
// Problems of the definition are reported at their place in the request:
// under ["body", "json_definition"] for the wrapper, ["body"] otherwise.
func readDefinition(r *http.Request) (*client.AgentDefinition, error) {
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	mt := mediaType(r)
	switch {
	case isYAMLMediaType(mt):
		return definitionFromYAML(body, "body")
	case isJSONMediaType(mt):
	default:
		return nil, invalid([]client.ValidationError{fieldError("model_attributes_type",
			"Send the definition as JSON (Content-Type: application/json) or YAML (Content-Type: text/plain or application/yaml)", nil, "body")})
	}

	if def, loc, ok := quickDefinition(body); ok {
		if err := validateDefinition(def, loc); err != nil {
			return nil, err
		}
		return def, nil
	}
	env, err := readEnvelope(body, "body")
	if err != nil {
		return nil, err
	}
	if env.YAMLDefinition == nil && env.JSONDefinition == nil {
		return definitionFrom(body, env, "body")
	}
	if !isNull(env.YAMLDefinition) {
		var text string
		if err := json.Unmarshal(env.YAMLDefinition, &text); err != nil {
			return nil, invalid([]client.ValidationError{fieldError("string_type", "Input should be a valid string", env.YAMLDefinition, "body", "yaml_definition")})
		}
		if strings.TrimSpace(text) != "" {
			return definitionFromYAML([]byte(text), "body", "yaml_definition")
		}
	}
	if !isNull(env.JSONDefinition) {
		return definitionFromJSON(env.JSONDefinition, "body", "json_definition")
	}
	return nil, errorf(KindInvalid, "Invalid workflow definition. Workflow should be provided in either yaml or json format.")
}

// anyDefinition decodes, in one pass, either form of a JSON definition
// request: a bare definition (the embedded fields) or one wrapped in
// json_definition. yaml_definition is only noticed.
type anyDefinition struct {
	client.AgentDefinition
	YAMLDefinition json.RawMessage   `json:"yaml_definition"`
	JSONDefinition wrappedDefinition `json:"json_definition"`
}

// wrappedDefinition is a json_definition: whether the key was there, and
// its definition unless it was null.
type wrappedDefinition struct {
	present bool
	def     *client.AgentDefinition
}

func (w *wrappedDefinition) UnmarshalJSON(b []byte) error {
	w.present = true
	if string(b) == "null" {
		return nil
	}
	w.def = new(client.AgentDefinition)
	return json.Unmarshal(b, w.def)
}

// quickDefinition decodes a JSON request in a single pass when it is
// plainly well formed: no yaml_definition, and a definition (bare or in
// json_definition) with a title, parameters and blocks that decoded without
// error. ok is false for anything else, which the careful path (the
// envelope, then the typed decoding) reads again to make the service's
// exact error. loc is where the definition sits in the request.
func quickDefinition(body []byte) (def *client.AgentDefinition, loc []any, ok bool) {
	var req anyDefinition
	if err := json.Unmarshal(body, &req); err != nil || req.YAMLDefinition != nil {
		return nil, nil, false
	}
	def, loc = &req.AgentDefinition, []any{"body"}
	if req.JSONDefinition.present {
		def, loc = req.JSONDefinition.def, []any{"body", "json_definition"}
	}
	if def == nil || def.Title == "" || def.WorkflowDefinition.Parameters == nil || def.WorkflowDefinition.Blocks == nil {
		return nil, nil, false
	}
	return def, loc, true
}

func isYAMLMediaType(mt string) bool {
	switch mt {
	case "text/plain", "application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml":
		return true
	}
	return false
}

func isNull(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) == 0 || bytes.Equal(b, []byte("null"))
}

// definitionFromYAML parses YAML text into a definition. YAML errors carry
// the line they are on.
func definitionFromYAML(text []byte, loc ...any) (*client.AgentDefinition, error) {
	b, err := yamljson.ToJSON(text)
	if err != nil {
		return nil, errorf(KindInvalid, "Invalid YAML in the workflow definition: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(b) == 0 || b[0] != '{' {
		return nil, errorf(KindInvalid, "Invalid workflow definition: the YAML document must be a mapping with title and workflow_definition")
	}
	return definitionFromJSON(b, loc...)
}

// envelope is a first look at a definition object, in one decoding pass
// that copies none of the values: which required fields are there (a
// missing required field and an empty one are different errors, which
// decoding into the typed definition cannot tell apart) and the
// yaml_definition or json_definition a request may wrap its definition in.
type envelope struct {
	Title              presence `json:"title"`
	WorkflowDefinition *struct {
		Parameters presence `json:"parameters"`
		Blocks     presence `json:"blocks"`
	} `json:"workflow_definition"`
	YAMLDefinition json.RawMessage `json:"yaml_definition"`
	JSONDefinition json.RawMessage `json:"json_definition"`
}

// presence is true when its key is there with a value other than null.
type presence bool

func (p *presence) UnmarshalJSON(b []byte) error {
	*p = presence(string(b) != "null")
	return nil
}

// readEnvelope decodes the envelope of b, a definition at loc. b must be a
// JSON object; a value of the wrong type inside it is left for the typed
// decoding to report.
func readEnvelope(b []byte, loc ...any) (*envelope, error) {
	var env envelope
	err := json.Unmarshal(b, &env)
	var syntax *json.SyntaxError
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '{' && !errors.As(err, &syntax) {
		return &env, nil
	}
	// Not an object, or not JSON: decoding it generically makes the error.
	var probe any
	if err := decodeJSON(b, &probe, loc[1:]...); err != nil {
		return nil, err
	}
	return nil, invalid([]client.ValidationError{fieldError("model_attributes_type", "Input should be a valid dictionary or object", probe, loc...)})
}

func definitionFromJSON(b []byte, loc ...any) (*client.AgentDefinition, error) {
	env, err := readEnvelope(b, loc...)
	if err != nil {
		return nil, err
	}
	return definitionFrom(b, env, loc...)
}

// definitionFrom decodes b, a definition object at loc whose envelope is
// env, and checks it.
func definitionFrom(b []byte, env *envelope, loc ...any) (*client.AgentDefinition, error) {
	var errs []client.ValidationError
	at := func(more ...any) []any { return append(append([]any{}, loc...), more...) }
	if !env.Title {
		errs = append(errs, fieldError("missing", "Field required", nil, at("title")...))
	}
	if env.WorkflowDefinition == nil {
		errs = append(errs, fieldError("missing", "Field required", nil, at("workflow_definition")...))
	} else {
		if !env.WorkflowDefinition.Parameters {
			errs = append(errs, fieldError("missing", "Field required", nil, at("workflow_definition", "parameters")...))
		}
		if !env.WorkflowDefinition.Blocks {
			errs = append(errs, fieldError("missing", "Field required", nil, at("workflow_definition", "blocks")...))
		}
	}
	if len(errs) > 0 {
		return nil, invalid(errs)
	}
	var def client.AgentDefinition
	if err := json.Unmarshal(b, &def); err != nil {
		if e := decodeJSON(b, &def, loc[1:]...); e != nil {
			if ae, ok := e.(*Error); ok && len(ae.Validation) > 0 && ae.Validation[0].Type == "value_error" {
				// Block union errors name the block: keep their text.
				return nil, errorf(KindInvalid, "Invalid workflow definition: %v", err)
			}
			return nil, e
		}
		return nil, errorf(KindInvalid, "Invalid workflow definition: %v", err)
	}
	if err := validateDefinition(&def, loc); err != nil {
		return nil, err
	}
	return &def, nil
}

// validateDefinition checks what the hosted service checks before it
// stores a definition (client.AgentDefinition.Validate: a title,
// identifier keys and labels, unique labels, no hand-made output
// parameters, parameter_keys and loop_over_parameter_key that name a
// parameter or a block's output, a for_loop with something to loop over,
// a proxy_location name the service knows, a finally block that exists),
// with the locations placed under loc, where the definition sits in the
// request. Like the service, it answers 422. Keys the service ignores
// were already dropped by decoding, and blocks of types the client does
// not know are kept as they came.
func validateDefinition(def *client.AgentDefinition, loc []any) error {
	errs := def.Validate()
	for i := range errs {
		errs[i].Loc = append(append([]any{}, loc...), errs[i].Loc...)
	}
	return invalid(errs)
}

// agentFromDefinition builds the agent record of a new version from a
// definition; newVersion then gives it its id, its time and the stored
// shape of its definition, and the store its wpid and version.
func agentFromDefinition(def *client.AgentDefinition) *client.Agent {
	a := &client.Agent{
		Title:                    def.Title,
		Description:              optString(def.Description),
		WorkflowDefinition:       def.WorkflowDefinition,
		ProxyLocation:            def.ProxyLocation,
		WebhookCallbackURL:       optString(def.WebhookCallbackURL),
		TOTPVerificationURL:      optString(def.TOTPVerificationURL),
		TOTPIdentifier:           optString(def.TOTPIdentifier),
		PersistBrowserSession:    def.PersistBrowserSession,
		ReuseBrowserSession:      def.ReuseBrowserSession,
		MaskSecrets:              def.MaskSecrets != nil && *def.MaskSecrets,
		PinSavedSessionIP:        def.PinSavedSessionIP,
		BrowserProfileID:         optString(def.BrowserProfileID),
		BrowserProfileKey:        optString(def.BrowserProfileKey),
		Model:                    def.Model,
		Status:                   def.Status,
		IsSavedTask:              def.IsSavedTask,
		MaxScreenshotScrolls:     def.MaxScreenshotScrolls,
		MaxElapsedTimeMinutes:    def.MaxElapsedTimeMinutes,
		ExtraHTTPHeaders:         def.ExtraHTTPHeaders,
		CDPConnectHeaders:        def.CDPConnectHeaders,
		RunWith:                  def.RunWith,
		AIFallback:               def.AIFallback == nil || *def.AIFallback,
		CacheKey:                 def.CacheKey,
		AdaptiveCaching:          def.AdaptiveCaching,
		EnableSelfHealing:        def.EnableSelfHealing != nil && *def.EnableSelfHealing,
		CodeVersion:              def.CodeVersion,
		GenerateScriptOnTerminal: def.GenerateScriptOnTerminal,
		RunSequentially:          &def.RunSequentially,
		SequentialKey:            optString(def.SequentialKey),
		FolderID:                 optString(def.FolderID),
	}
	if a.Status == "" {
		a.Status = client.AgentStatusPublished
	}
	if a.RunWith == "" {
		a.RunWith = "agent"
	}
	if a.CacheKey == nil {
		a.CacheKey = client.Ptr("default")
	}
	return a
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
