package blocks

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/abctl/abctl/agentfile/tmpl"
	"github.com/abctl/abctl/client"
)

// scope is where a block runs: the top level of the run, or an iteration
// of a loop inside its parent's scope. Templates see the run's parameters,
// the outputs so far and the loop variables of the scope's chain.
type scope struct {
	in     *Interpreter
	parent *scope
	label  string         // the loop block's label
	vals   map[string]any // the loop variables
	iter   *outputs       // the outputs of the iteration's blocks
}

// loop returns the scope of an iteration of the loop block label with
// vals inside sc.
func (sc *scope) loop(label string, vals map[string]any) *scope {
	return &scope{in: sc.in, parent: sc, label: label, vals: vals, iter: newOutputs()}
}

// inLoop reports whether the scope is a loop iteration.
func (sc *scope) inLoop() bool { return sc.iter != nil }

// vars is what templates see: the parameters, the outputs so far, and the
// loop variables, inner ones last; and, as the hosted service registers
// them, each block's label: {"output": its output} once it has one, and a
// running loop's label with its iteration (current_value, current_index,
// current_item) too, so that {{ get_data.output }} and
// {{ each_invoice.current_value }} read what they say. A parameter of the
// same name as a label keeps the name.
func (sc *scope) vars() map[string]any {
	v := make(map[string]any, len(sc.in.params)+8)
	for k, x := range sc.in.params {
		v[k] = x
	}
	sc.in.outputs.each(func(k string, x any) { v[k] = x })
	var chain []*scope
	for s := sc; s != nil; s = s.parent {
		chain = append(chain, s)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		for k, x := range chain[i].vals {
			v[k] = x
		}
		if chain[i].iter != nil {
			chain[i].iter.each(func(k string, x any) { v[k] = x })
		}
	}
	for _, label := range sc.in.labels {
		if _, taken := sc.in.params[label]; taken {
			continue
		}
		ref := map[string]any{}
		if out, ok := v[label+"_output"]; ok {
			ref["output"] = out
		}
		for _, s := range chain {
			if s.label == label {
				// The innermost iteration of this loop.
				for _, k := range []string{"current_value", "current_index", "current_item"} {
					ref[k] = s.vals[k]
				}
				break
			}
		}
		if len(ref) > 0 {
			v[label] = ref
		}
	}
	return v
}

// templateError is a template that could not be rendered; retrying does
// not help.
type templateError struct{ err error }

func (t *templateError) Error() string { return t.err.Error() }
func (t *templateError) Unwrap() error { return t.err }

// render renders a template field.
func (sc *scope) render(s string) (string, error) {
	out, err := tmpl.Render(s, sc.vars())
	if err != nil {
		return "", &templateError{err}
	}
	return out, nil
}

// renderURL renders a block's url. A url that is only the key of a
// parameter (url: website_url, no braces) is that parameter's value, as
// the hosted service reads it; anything else is a template.
func (sc *scope) renderURL(s string) (string, error) {
	if key := strings.TrimSpace(s); key != "" {
		if v, ok := sc.in.params[key]; ok {
			if text, ok := v.(string); ok {
				return text, nil
			}
		}
	}
	return sc.render(s)
}

// renderAll renders template fields in place, stopping at the first that
// fails.
func (sc *scope) renderAll(fields ...*string) error {
	for _, f := range fields {
		if *f == "" {
			continue
		}
		out, err := sc.render(*f)
		if err != nil {
			return err
		}
		*f = out
	}
	return nil
}

// details are the values a block's model is given: the values its
// parameter_keys name (any template path); without keys, only the values
// that the block's texts (its templates, before they are rendered) name
// by a reference, {{ name }} or {{ name.field }}: a run parameter, a
// block's output, a loop's value. A parameter that neither a key nor a
// text of the block names (a password meant for another block) never
// reaches the block's model.
func (sc *scope) details(keys []string, texts ...string) (map[string]any, error) {
	vars := sc.vars()
	out := map[string]any{}
	if len(keys) > 0 {
		for _, k := range keys {
			v, err := tmpl.Lookup(k, vars)
			if err != nil {
				return nil, &templateError{fmt.Errorf("parameter_keys: %w", err)}
			}
			out[k] = jsonValue(v)
		}
		return out, nil
	}
	for _, t := range texts {
		for _, ref := range tmpl.References(t) {
			if v, ok := vars[ref.Root]; ok && ref.Root != "" {
				out[ref.Root] = jsonValue(v)
			}
		}
	}
	return out, nil
}

// addLoopValues adds to details the values of the loops the scope is in
// (current_value, current_index, current_item), inner ones first, unless
// details has a value of that name: a block that acts inside a loop works
// on its item.
func (sc *scope) addLoopValues(details map[string]any) {
	for s := sc; s != nil; s = s.parent {
		for k, v := range s.vals {
			if _, ok := details[k]; !ok {
				details[k] = jsonValue(v)
			}
		}
	}
}

// loopValues returns the list a for_loop iterates over.
func (sc *scope) loopValues(b *client.ForLoopBlock) ([]any, error) {
	var path string
	switch {
	case b.LoopOver != nil && b.LoopOver.Key != "":
		path = b.LoopOver.Key
	case b.LoopOverParameterKey != "":
		path = b.LoopOverParameterKey
	default:
		path = strings.TrimSpace(b.LoopVariableReference)
		if strings.HasPrefix(path, "{{") && strings.HasSuffix(path, "}}") {
			path = strings.TrimSpace(path[2 : len(path)-2])
		}
	}
	vars := sc.vars()
	var v any
	if _, param := sc.in.params[path]; !param && slices.Contains(sc.in.labels, path) {
		// A block's label: what that block put out.
		out, ok := vars[path+"_output"]
		if !ok {
			return nil, &templateError{fmt.Errorf("loop over block %q: it has no output (yet)", path)}
		}
		v = out
	} else {
		// A path (a.b[0]) first; an expression (filters, arithmetic)
		// when it is more. Both fail on a name nothing defines.
		var err error
		if v, err = tmpl.Lookup(path, vars); err != nil {
			ev, eerr := tmpl.Eval(path, vars)
			if eerr != nil || ev == nil {
				return nil, &templateError{fmt.Errorf("loop over {{ %s }}: %w", path, err)}
			}
			v = ev
		}
	}
	items := asList(v)
	if len(items) == 1 {
		if obj, ok := items[0].(map[string]any); ok {
			return listField(path, obj)
		}
	}
	return items, nil
}

// listField is what a loop over the object obj loops over: the list of
// its one field that holds a list (an extraction's {"products": [...]}),
// or obj itself, once, when no field holds a list. Several list fields are
// ambiguous: the error names them.
func listField(path string, obj map[string]any) ([]any, error) {
	var lists []string
	for k, x := range obj {
		if _, ok := x.([]any); ok {
			lists = append(lists, k)
		}
	}
	switch len(lists) {
	case 0:
		return []any{obj}, nil
	case 1:
		return obj[lists[0]].([]any), nil
	}
	slices.Sort(lists)
	return nil, &templateError{fmt.Errorf("loop over %s: the object has several lists (%s); name one, as in {{ %s.%s }}", path, strings.Join(lists, ", "), path, lists[0])}
}

// asList turns a loop value into items: a list as it is, a JSON text of a
// list decoded, null as nothing, anything else as a list of one.
func asList(v any) []any {
	if raw, ok := v.(json.RawMessage); ok {
		var x any
		if json.Unmarshal(raw, &x) == nil {
			v = x
		}
	}
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return x
	case string:
		s := strings.TrimSpace(x)
		if strings.HasPrefix(s, "[") {
			var list []any
			if json.Unmarshal([]byte(s), &list) == nil {
				return list
			}
		}
		if s == "" {
			return nil
		}
	}
	return []any{v}
}

// jsonValue decodes JSON kept as json.RawMessage, so details marshal
// cleanly.
func jsonValue(v any) any {
	if raw, ok := v.(json.RawMessage); ok {
		var x any
		if json.Unmarshal(raw, &x) == nil {
			return x
		}
	}
	return v
}
