package agentfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/abctl/abctl/client"
)

// Normalizing makes "the same agent" a byte comparison. The definition is
// first put in the request shape (client.Agent.Definition, the one place
// that knows the response shapes), written as JSON by the client, and read
// back as an ordered tree, which is then reduced:
//
//   - every value equal to what leaving it out means is removed: null, "",
//     empty lists and mappings, false and 0 where they are the default,
//     and the defaults the service fills in and echoes (status published,
//     engine skyvern-1.0, http_request method GET, ...: the table below;
//     testdata/hosted/defaults.response.json is the hosted service's
//     answer for a definition that leaves them out);
//   - what the service derives by itself is removed: the definition's
//     version (recomputed from the blocks) and a code block's steps
//     (rebuilt from its code);
//   - cdp_connect_headers values are written "***", as the service masks
//     them in every response (so a change of such a value alone is not
//     seen);
//   - URLs the service normalizes are normalized the same way (a missing
//     scheme becomes https://, a bare host gets its "/"); a value that is
//     not a URL (a template, a parameter key) is kept as written;
//   - keys of the definition keep the client's order, but for a block's
//     label and block_type and a parameter's key, which come first as in
//     the service's exports, and the workflow definition and a loop's
//     blocks, which come last; keys of user data (default values,
//     schemas, bodies, headers) are sorted.
//
// Keys a file must have (title, workflow_definition, a navigation block's
// navigation_goal, ...) are kept even when empty. Values inside user data
// are kept as they are, "" and null included: there they mean something.

// defaults are the values the service gives a key left out, per object
// (the names of schema objects), as canonical JSON.
var defaults = map[string]map[string]string{
	"agent": {
		"status": `"published"`, "run_with": `"agent"`, "ai_fallback": `true`, "cache_key": `"default"`,
		"mask_secrets": `false`, "enable_self_healing": `false`,
	},
	"navigation block":      taskLikeDefaults,
	"extraction block":      taskLikeDefaults,
	"task block":            taskLikeDefaults,
	"validation block":      taskLikeDefaults,
	"action block":          merge(taskLikeDefaults, map[string]string{"ai_fallback": `"fallback"`}),
	"login block":           taskLikeDefaults,
	"file_download block":   merge(taskLikeDefaults, map[string]string{"download_target": `"website"`}),
	"task_v2 block":         {"max_iterations": `50`, "max_steps": `25`},
	"criteria":              {"criteria_type": `"jinja2_template"`},
	"code step":             {"action_type": `"null_action"`},
	"file_upload block":     {"storage_type": `"s3"`},
	"file_url_parser block": {"file_type": `"auto_detect"`},
	"human_interaction block": {
		"positive_descriptor": `"Approve"`, "negative_descriptor": `"Reject"`, "timeout_seconds": `7200`,
		"sender": `"hello@skyvern.com"`,
	},
	"http_request block":        {"method": `"GET"`, "timeout": `30`, "follow_redirects": `true`},
	"print_page block":          {"include_timestamp": `true`, "format": `"A4"`, "print_background": `true`},
	"workflow_trigger block":    {"wait_for_completion": `true`},
	"google_sheets_read block":  {"has_header_row": `true`},
	"google_sheets_write block": {"write_mode": `"append"`},
	"email_inbox block":         {"max_results": `25`, "include_body": `true`},
}

var taskLikeDefaults = map[string]string{"engine": `"skyvern-1.0"`, "complete_verification": `true`}

func merge(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// derived are the keys whose value the service computes itself.
var derived = map[string]bool{
	"workflow_definition.version": true,
	"code block.steps":            true,
}

// keepEmpty are the keys where an empty string differs from leaving the key
// out: cache_key "" is not the default cache key.
var keepEmpty = map[string]bool{"agent.cache_key": true}

// parameterKey is the form of a parameter key: a Python identifier. A URL
// field holding one names a parameter rather than a host.
var parameterKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// normalizedURLs are the keys whose URLs the service normalizes.
var normalizedURLs = map[string]bool{
	"agent.webhook_callback_url":  true,
	"agent.totp_verification_url": true,
}

// Normalize returns the canonical form of a definition: what the service
// stores for it, as YAML text, so that two definitions the service treats
// as the same give the same bytes, and a diff of two of them shows only
// what matters.
func Normalize(def *client.AgentDefinition) ([]byte, error) {
	v, err := normalizedTree(def)
	if err != nil {
		return nil, err
	}
	return encodeYAML(v)
}

// NormalizeAgent returns the canonical form of an agent as the service
// returns it, comparable with Normalize of the definition it was created
// or last updated from.
func NormalizeAgent(a *client.Agent) ([]byte, error) {
	if a == nil {
		return nil, errors.New("agentfile: NormalizeAgent of a nil agent")
	}
	return Normalize(a.Definition())
}

func normalizedTree(def *client.AgentDefinition) (*jvalue, error) {
	if def == nil {
		return nil, errors.New("agentfile: Normalize of a nil definition")
	}
	// The request shape of the workflow definition, through the client's
	// conversion of response shapes (a no-op on a request-shaped one but
	// for the response-only fields it drops).
	c := *def
	c.WorkflowDefinition = (&client.Agent{WorkflowDefinition: def.WorkflowDefinition}).Definition().WorkflowDefinition
	data, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("agentfile: normalize: %w", err)
	}
	tree, err := decodeOrdered(data)
	if err != nil {
		return nil, fmt.Errorf("agentfile: normalize: %w", err)
	}
	out := normalizeObject(tree, loadSchema().agent)
	if out == nil {
		out = &jvalue{kind: 'o'}
	}
	return out, nil
}

// normalizeValue reduces v of shape s; nil means "as if left out". In a
// list (inList) an element is never left out, so empty values are kept.
func normalizeValue(v *jvalue, s *shape, inList bool) *jvalue {
	if v == nil || v.kind == 'z' {
		if inList {
			return v
		}
		return nil
	}
	switch s.kind {
	case kindString, kindProxy:
		if v.kind == 's' && v.s == "" && !inList {
			return nil
		}
		return canonical(v)
	case kindBool, kindInt, kindFloat:
		return canonical(v)
	case kindList, kindBlocks:
		if v.kind != 'a' {
			return canonical(v)
		}
		if len(v.items) == 0 && !inList {
			return nil
		}
		out := &jvalue{kind: 'a'}
		for _, it := range v.items {
			if s.kind == kindBlocks {
				out.items = append(out.items, normalizeBlock(it))
			} else {
				out.items = append(out.items, normalizeValue(it, s.elem, true))
			}
		}
		return out
	case kindMap:
		if v.kind != 'o' {
			return canonical(v)
		}
		out := &jvalue{kind: 'o'}
		for i, k := range v.keys {
			out.keys = append(out.keys, k)
			out.vals = append(out.vals, normalizeValue(v.vals[i], s.elem, true))
		}
		if len(out.keys) == 0 && !inList {
			return nil
		}
		return sortKeys(out)
	case kindObject:
		if v.kind != 'o' {
			return canonical(v)
		}
		out := normalizeObject(v, s.obj)
		if out == nil && inList {
			return &jvalue{kind: 'o'}
		}
		return out
	}
	return canonical(v)
}

func normalizeBlock(v *jvalue) *jvalue {
	if v.kind == 'o' {
		if t := v.get("block_type"); t != nil && t.kind == 's' {
			if o := loadSchema().blocks[client.BlockType(t.s)]; o != nil {
				return normalizeObject(v, o)
			}
		}
	}
	// A block of a type the client does not know is kept whole, but for
	// its members that are null: the service answers null for what was
	// left out, and a file need not spell those out.
	out := canonical(v)
	if out.kind == 'o' {
		kept := &jvalue{kind: 'o'}
		for i, k := range out.keys {
			if out.vals[i].kind != 'z' {
				kept.keys = append(kept.keys, k)
				kept.vals = append(kept.vals, out.vals[i])
			}
		}
		out = kept
	}
	return out
}

// normalizeObject reduces the fields of a schema object, in the order they
// come (the client's); nil when nothing is left.
func normalizeObject(v *jvalue, o *object) *jvalue {
	out := &jvalue{kind: 'o'}
	for i, k := range v.keys {
		where := o.name + "." + k
		if derived[where] {
			continue
		}
		f := o.byName[k]
		var nv *jvalue
		if f == nil {
			nv = canonical(v.vals[i]) // not in the schema: kept as it is
		} else {
			nv = normalizeValue(v.vals[i], f.shape, false)
		}
		if nv == nil {
			switch {
			case keepEmpty[where] && v.vals[i].kind == 's':
				nv = v.vals[i]
			case f != nil && f.required && v.vals[i].kind != 'z':
				// A key a file must have stays, empty: the service keeps
				// it, and the file could not be loaded without it.
				nv = canonical(v.vals[i])
				if nv.kind == 'o' {
					nv = &jvalue{kind: 'o'}
				}
			default:
				continue
			}
		}
		switch {
		case k == "cdp_connect_headers" && o.name == "agent" && nv.kind == 'o':
			for j := range nv.vals {
				nv.vals[j] = &jvalue{kind: 's', s: "***"}
			}
		case nv.kind == 's' && (normalizedURLs[where] || k == "url" && strings.HasSuffix(o.name, " block")):
			nv = &jvalue{kind: 's', s: normalizeURL(nv.s)}
		case nv.kind == 's' && where == "http_request block.method":
			nv = &jvalue{kind: 's', s: strings.ToUpper(nv.s)}
		}
		if d, ok := defaults[o.name][k]; ok && jsonText(nv) == d {
			continue
		}
		out.keys = append(out.keys, k)
		out.vals = append(out.vals, nv)
	}
	if len(out.keys) == 0 {
		return nil
	}
	switch {
	case strings.HasSuffix(o.name, " block"):
		return reorder(out, []string{"label", "block_type"}, []string{"loop_blocks"})
	case o.name == "parameter":
		return reorder(out, []string{"key"}, nil)
	case o.name == "agent":
		return reorder(out, nil, []string{"workflow_definition"})
	}
	return out
}

// reorder moves the keys first to the front and the keys last to the end,
// as files exported by the service write them (a block's label first, a
// parameter's key) and so that the short settings are not lost below long
// lists (the workflow definition, a loop's blocks).
func reorder(v *jvalue, first, last []string) *jvalue {
	out := &jvalue{kind: 'o'}
	add := func(k string) {
		if x := v.get(k); x != nil {
			out.keys = append(out.keys, k)
			out.vals = append(out.vals, x)
		}
	}
	for _, k := range first {
		add(k)
	}
	for i, k := range v.keys {
		if !slices.Contains(first, k) && !slices.Contains(last, k) {
			out.keys = append(out.keys, k)
			out.vals = append(out.vals, v.vals[i])
		}
	}
	for _, k := range last {
		add(k)
	}
	return out
}

// normalizeURL does to a URL what the service does on input: a missing
// scheme becomes https://, and a bare host gets a trailing "/". Only URLs
// are normalized: templated values ({{ }}), a word that can be a
// parameter key (url: website_url, which the service reads as that
// parameter's value) and anything that does not parse are left alone.
func normalizeURL(s string) string {
	if s == "" || strings.Contains(s, "{{") || parameterKey.MatchString(s) {
		return s
	}
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return s
	}
	if u.Path == "" && u.RawPath == "" {
		u.Path = "/"
	}
	return u.String()
}
