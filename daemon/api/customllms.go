package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"unicode/utf8"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/localrun/executor"
)

// Custom models: GET and POST /v1/custom-llms, PUT and DELETE
// /v1/custom-llms/{id}.
//
// A model's API key is read here, handed to the store, which seals it, and
// to the check of the endpoint; it is never written back (answers carry
// api_key null), logged, or repeated in an error: the validation entries
// of api_key carry no input.

// ModelCheck tells whether a custom model's endpoint answers; the error
// says why not, without the key. The daemon's sends one short call with a
// bounded timeout (package engine, CheckCustomModel), through the egress
// guard of orgID, the organization that saves the model.
type ModelCheck func(ctx context.Context, orgID string, m executor.CustomModel) error

// WithModelCheck makes the server check the endpoint of every custom model
// it saves, recording the outcome as the model's valid. Without it, no
// endpoint is contacted and every model is saved with valid false.
func WithModelCheck(check ModelCheck) ServerOption {
	return func(s *Server) { s.modelCheck = check }
}

var customLLMProviders = []string{"openai_compatible", "ollama", "openrouter"}

// customLLMConfigBody is the config of a create or update body (upstream
// CustomLLMConfig); pointers tell an absent field from an empty one.
type customLLMConfigBody struct {
	DisplayName         *string  `json:"display_name"`
	Provider            *string  `json:"provider"`
	ModelName           *string  `json:"model_name"`
	APIBase             *string  `json:"api_base"`
	APIKey              *string  `json:"api_key"`
	APIVersion          *string  `json:"api_version"`
	SupportsVision      *bool    `json:"supports_vision"`
	AddAssistantPrefix  *bool    `json:"add_assistant_prefix"`
	MaxCompletionTokens *int     `json:"max_completion_tokens"`
	Temperature         *float64 `json:"temperature"`
	ReasoningEffort     *string  `json:"reasoning_effort"`
}

// readCustomLLM reads and checks a create or update body; every problem
// is reported at once. The key is returned apart from the configuration.
func readCustomLLM(r *http.Request) (client.CustomLLMConfig, *string, error) {
	var body struct {
		Config json.RawMessage `json:"config"`
	}
	if err := decodeJSONBody(r, &body); err != nil {
		return client.CustomLLMConfig{}, nil, err
	}
	if isNull(body.Config) {
		return client.CustomLLMConfig{}, nil, invalid([]client.ValidationError{missingField("body", "config")})
	}
	var in customLLMConfigBody
	if err := decodeJSON(body.Config, &in, "config"); err != nil {
		return client.CustomLLMConfig{}, nil, err
	}
	loc := func(field string) []any { return []any{"body", "config", field} }
	var errs []client.ValidationError
	// text checks a string field's length; secret fields are reported
	// without their input.
	text := func(v *string, field string, required bool, minLen, maxLen int, secret bool) {
		switch {
		case v == nil:
			if required {
				errs = append(errs, missingField(loc(field)...))
			}
			return
		}
		var input any = *v
		if secret {
			input = nil
		}
		n := utf8.RuneCountInString(*v)
		switch {
		case n < minLen:
			errs = append(errs, fieldError("string_too_short", fmt.Sprintf("String should have at least %d character", minLen), input, loc(field)...))
		case n > maxLen:
			errs = append(errs, fieldError("string_too_long", fmt.Sprintf("String should have at most %d characters", maxLen), input, loc(field)...))
		}
	}
	text(in.DisplayName, "display_name", true, 1, 120, false)
	text(in.ModelName, "model_name", true, 1, 250, false)
	text(in.APIBase, "api_base", false, 0, 500, false)
	text(in.APIKey, "api_key", false, 0, 1000, true)
	text(in.APIVersion, "api_version", false, 0, 100, false)
	text(in.ReasoningEffort, "reasoning_effort", false, 0, 50, false)
	switch {
	case in.Provider == nil:
		errs = append(errs, missingField(loc("provider")...))
	case !contains(customLLMProviders, *in.Provider):
		errs = append(errs, enumError(customLLMProviders, *in.Provider, loc("provider")...))
	case *in.Provider == "openai_compatible" && (in.APIBase == nil || *in.APIBase == ""):
		errs = append(errs, valueError("an openai_compatible model needs api_base, the root of its API (such as http://127.0.0.1:8000/v1)", nil, loc("api_base")...))
	}
	if b := in.APIBase; b != nil && *b != "" && utf8.RuneCountInString(*b) <= 500 {
		if u, err := url.Parse(*b); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, valueError("api_base must be an http:// or https:// URL with a host, such as http://127.0.0.1:8000/v1", *b, loc("api_base")...))
		} else if u.User != nil {
			// The URL's password is a secret: not repeated.
			errs = append(errs, valueError("api_base must not hold credentials: put the key in api_key", nil, loc("api_base")...))
		}
	}
	if n := in.MaxCompletionTokens; n != nil && (*n < 1 || *n > 1_000_000) {
		if *n < 1 {
			errs = append(errs, boundError("greater_than_equal", "greater than or equal to", "ge", 1, *n, loc("max_completion_tokens")))
		} else {
			errs = append(errs, boundError("less_than_equal", "less than or equal to", "le", 1_000_000, *n, loc("max_completion_tokens")))
		}
	}
	if t := in.Temperature; t != nil && (*t < 0 || *t > 2) {
		if *t < 0 {
			errs = append(errs, boundError("greater_than_equal", "greater than or equal to", "ge", 0, *t, loc("temperature")))
		} else {
			errs = append(errs, boundError("less_than_equal", "less than or equal to", "le", 2, *t, loc("temperature")))
		}
	}
	if err := invalid(errs); err != nil {
		return client.CustomLLMConfig{}, nil, err
	}
	vision, prefix := true, false
	if in.SupportsVision != nil {
		vision = *in.SupportsVision
	}
	if in.AddAssistantPrefix != nil {
		prefix = *in.AddAssistantPrefix
	}
	cfg := client.CustomLLMConfig{DisplayName: *in.DisplayName, Provider: client.CustomLLMProvider(*in.Provider), ModelName: *in.ModelName,
		APIBase: in.APIBase, APIVersion: in.APIVersion, SupportsVision: &vision, AddAssistantPrefix: &prefix,
		MaxCompletionTokens: in.MaxCompletionTokens, Temperature: in.Temperature, ReasoningEffort: in.ReasoningEffort}
	return cfg, in.APIKey, nil
}

// boundError is the hosted service's entry for a number out of its range.
func boundError[T int | float64](typ, words, ctxKey string, bound, input T, loc []any) client.ValidationError {
	e := fieldError(typ, fmt.Sprintf("Input should be %s %v", words, bound), input, loc...)
	e.Ctx, _ = json.Marshal(map[string]T{ctxKey: bound})
	return e
}

// checkCustomLLM tries the endpoint of m with the server's ModelCheck;
// false without one. The reason of a failure is logged (it holds no key).
func (s customLLMsAPI) checkCustomLLM(r *http.Request, m executor.CustomModel) bool {
	if s.modelCheck == nil {
		return false
	}
	if err := s.modelCheck(r.Context(), organization(r.Context()).ID, m); err != nil {
		s.logger.InfoContext(r.Context(), "a custom model's endpoint did not answer its check; it is saved with valid false",
			"request_id", requestID(r.Context()), "custom_llm_id", m.ID, "error", err.Error())
		return false
	}
	return true
}

// customLLMError words the store's not-found for a custom model as an API
// detail; other errors pass through.
func customLLMError(err error) error {
	var nf *store.NotFoundError
	if errors.As(err, &nf) && nf.Record == store.RecordCustomLLM {
		return errorf(KindNotFound, "Custom LLM %s not found", nf.ID)
	}
	return err
}

// handleListCustomLLMs serves GET /v1/custom-llms.
func (s customLLMsAPI) handleListCustomLLMs(w http.ResponseWriter, r *http.Request) {
	out, err := s.customLLMs.List(r.Context(), organization(r.Context()).ID)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"custom_llms": out})
}

// handleCreateCustomLLM serves POST /v1/custom-llms: the endpoint is
// checked before the model is stored, and the answer says whether it
// answered (valid).
func (s customLLMsAPI) handleCreateCustomLLM(w http.ResponseWriter, r *http.Request) {
	cfg, key, err := readCustomLLM(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	org := organization(r.Context()).ID
	id := s.customLLMs.NewID()
	m := store.CustomModelOf(id, cfg)
	if key != nil {
		m.APIKey = *key
	}
	valid := s.checkCustomLLM(r, m)
	out, err := s.customLLMs.Create(r.Context(), org, id, &store.CustomLLMInput{Config: cfg, Key: key, Valid: valid})
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"custom_llm": out})
}

// handleUpdateCustomLLM serves PUT /v1/custom-llms/{id}: the whole
// configuration is replaced; an absent or null api_key keeps the stored
// key, an empty one removes it. The endpoint is checked again.
func (s customLLMsAPI) handleUpdateCustomLLM(w http.ResponseWriter, r *http.Request) {
	org, id := organization(r.Context()).ID, r.PathValue("id")
	// An unknown id answers 404 before the body is looked at.
	stored, err := s.customLLMs.Model(r.Context(), org, id)
	if err != nil {
		s.error(w, r, customLLMError(err))
		return
	}
	cfg, key, err := readCustomLLM(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	m := store.CustomModelOf(id, cfg)
	m.APIKey = stored.APIKey
	if key != nil {
		m.APIKey = *key
	}
	valid := s.checkCustomLLM(r, m)
	out, err := s.customLLMs.Update(r.Context(), org, id, &store.CustomLLMInput{Config: cfg, Key: key, Valid: valid})
	if err != nil {
		s.error(w, r, customLLMError(err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"custom_llm": out})
}

// handleDeleteCustomLLM serves DELETE /v1/custom-llms/{id}.
func (s customLLMsAPI) handleDeleteCustomLLM(w http.ResponseWriter, r *http.Request) {
	if err := s.customLLMs.Delete(r.Context(), organization(r.Context()).ID, r.PathValue("id")); err != nil {
		s.error(w, r, customLLMError(err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"success": true})
}
