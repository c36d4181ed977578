package blocks

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/localrun/engine/runbrowser"
	"github.com/abctl/abctl/localrun/engine/secrets"
	"github.com/abctl/abctl/localrun/engine/steplog"
)

// runAccess is what the blocks that work beside the browser share: the
// run's step log, its files, its egress guard and its credentials. Each
// block family holds it with the few other things it needs, never the
// whole Interpreter.
type runAccess struct {
	steps *steplog.Log
	files *runbrowser.Files
	// guard decides what the run's blocks may reach over the network
	// (nil: no policy).
	guard *egress.Guard
	// secrets reveals credentials' placeholders to the services that need
	// them, and scrubs their values from what those services answer.
	secrets *secrets.Set
	// params are the run's parameter values.
	params map[string]any
}

// step runs do as one step of the block label, described by a, in the
// run's step log: do returns the block's output and the step's result.
func (r runAccess) step(label string, a steplog.Action, do func() (any, string, error)) (any, error) {
	rec, err := r.steps.Start(label, a)
	if err != nil {
		return nil, err
	}
	out, result, err := do()
	r.steps.End(rec, "", result, err)
	return out, err
}

// sourceFile returns the path of the file a block's file_url names: a
// file fetched from an http(s) URL, or one of the run's files by its name.
func (r runAccess) sourceFile(ctx context.Context, ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	if strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://") {
		return r.files.FetchUpload(ctx, ref)
	}
	if p, ok := r.files.Path(ref); ok {
		return p, nil
	}
	if u, err := url.Parse(ref); err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		// file:, ftp:, data:...: refused as every channel refuses them.
		return "", r.guard.CheckURL(ctx, ref)
	}
	return "", fmt.Errorf("file_url %q is neither an http(s) URL nor the name of a file this run downloaded or saved", ref)
}

// secretField is the value of a block's field that may hold a secret: the
// value of the parameter the field names (a credential parameter's secret
// value or password), or else the field as a template; credentials'
// placeholders are revealed. field names the field in errors.
func (r runAccess) secretField(ctx context.Context, sc *scope, field, raw string) (string, error) {
	if strings.TrimSpace(raw) == "" {
		return "", nil
	}
	v, named, err := r.paramText(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("%s: %w", field, err)
	}
	if !named {
		if v, err = sc.render(raw); err != nil {
			return "", err
		}
	}
	real, _, err := r.secrets.Reveal(ctx, v)
	if err != nil {
		return "", fmt.Errorf("%s: %w", field, err)
	}
	return real, nil
}

// blockCredential is the credential a block's credential_id names (ref,
// as written without a template's braces): the credential parameter of
// that key, else the one read before the run for that id
// (WithBlockCredentials). key is the parameter's key, for its secrets'
// placeholders.
func (r runAccess) blockCredential(credentialID string) (ref, key string, cred map[string]any, err error) {
	ref = parameterRef(credentialID)
	key = ref
	if _, ok := r.params[key].(map[string]any); !ok {
		key = blockCredentialKey(ref)
	}
	cred, ok := r.params[key].(map[string]any)
	if !ok {
		return ref, key, nil, fmt.Errorf("credential_id %q names neither a credential parameter of the agent nor a credential read before the run", ref)
	}
	return ref, key, cred, nil
}

// paramText is the text of the run's parameter key: a text, or a
// credential's secret value or password. named is false when no parameter
// has that key.
func (r runAccess) paramText(key string) (text string, named bool, err error) {
	v, ok := r.params[key]
	if !ok {
		return "", false, nil
	}
	switch x := v.(type) {
	case string:
		return x, true, nil
	case map[string]any:
		for _, f := range []string{"secret_value", "password"} {
			if s, ok := x[f].(string); ok {
				return s, true, nil
			}
		}
	}
	return "", true, fmt.Errorf("the parameter %q holds %T, not a text", key, v)
}
