package api

import (
	"bytes"
	"encoding/json"
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

	var top map[string]json.RawMessage
	if err := decodeJSON(body, &top); err != nil {
		return nil, err
	}
	yamlRaw, hasYAML := top["yaml_definition"]
	jsonRaw, hasJSON := top["json_definition"]
	if !hasYAML && !hasJSON {
		return definitionFromJSON(body, "body")
	}
	if hasYAML && !isNull(yamlRaw) {
		var text string
		if err := json.Unmarshal(yamlRaw, &text); err != nil {
			return nil, invalid([]client.ValidationError{fieldError("string_type", "Input should be a valid string", yamlRaw, "body", "yaml_definition")})
		}
		if strings.TrimSpace(text) != "" {
			return definitionFromYAML([]byte(text), "body", "yaml_definition")
		}
	}
	if hasJSON && !isNull(jsonRaw) {
		return definitionFromJSON(jsonRaw, "body", "json_definition")
	}
	return nil, errorf(KindInvalid, "Invalid workflow definition. Workflow should be provided in either yaml or json format.")
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

// required is the shape used to tell a missing required field from an
// empty one, which decoding into the typed definition cannot.
type required struct {
	Title              *json.RawMessage `json:"title"`
	WorkflowDefinition *struct {
		Parameters *json.RawMessage `json:"parameters"`
		Blocks     *json.RawMessage `json:"blocks"`
	} `json:"workflow_definition"`
}

func definitionFromJSON(b []byte, loc ...any) (*client.AgentDefinition, error) {
	var probe any
	if err := decodeJSON(b, &probe, loc[1:]...); err != nil {
		return nil, err
	}
	if _, ok := probe.(map[string]any); !ok {
		return nil, invalid([]client.ValidationError{fieldError("model_attributes_type", "Input should be a valid dictionary or object", probe, loc...)})
	}
	var req required
	_ = json.Unmarshal(b, &req)
	var errs []client.ValidationError
	at := func(more ...any) []any { return append(append([]any{}, loc...), more...) }
	if req.Title == nil {
		errs = append(errs, fieldError("missing", "Field required", nil, at("title")...))
	}
	if req.WorkflowDefinition == nil {
		errs = append(errs, fieldError("missing", "Field required", nil, at("workflow_definition")...))
	} else {
		if req.WorkflowDefinition.Parameters == nil {
			errs = append(errs, fieldError("missing", "Field required", nil, at("workflow_definition", "parameters")...))
		}
		if req.WorkflowDefinition.Blocks == nil {
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
