package agentfile

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/abctl/abctl/agentfile/tmpl"
	"github.com/abctl/abctl/client"
)

// validate runs the checks the service makes beyond shapes (the client's
// AgentDefinition.Validate, shared with the daemon) and places each
// finding on the line its location points to.
func (w *walker) validate(root *yaml.Node, def *client.AgentDefinition) {
	for _, v := range def.Validate() {
		node, c := locate(root, v.Loc)
		if w.alreadyReported(c.path) {
			continue
		}
		var msg string
		switch {
		case v.Type == "missing":
			msg = fmt.Sprintf("missing required key %q", c.name())
		case v.Type == "string_too_short":
			msg = fmt.Sprintf("%q must not be empty", c.name())
		case v.Type == "enum" && c.path == "proxy_location":
			var name string
			_ = json.Unmarshal(v.Input, &name)
			known := client.ProxyLocationNames()
			msg = fmt.Sprintf("unknown proxy_location %q%s; known: %s, or a mapping (country, subdivision, city, or url)",
				name, suggest(name, known), strings.Join(known, ", "))
		default:
			msg = lowerFirst(v.Msg)
		}
		w.problem(node, c, "%s", msg)
	}
}

// alreadyReported reports whether path is at or under a place that already
// has a problem or was left out as a whole.
func (w *walker) alreadyReported(path string) bool {
	under := func(prefix string) bool {
		if !strings.HasPrefix(path, prefix) {
			return false
		}
		rest := path[len(prefix):]
		return rest == "" || prefix == "" || rest[0] == '.' || rest[0] == '['
	}
	for _, p := range w.reported {
		if under(p) {
			return true
		}
	}
	for _, p := range w.quiet {
		if under(p) {
			return true
		}
	}
	return false
}

// locate finds the node a validation location points to, as deep as the
// document goes (the mapping that lacks a missing key), and the context of
// that place: its path and the innermost block's label.
func locate(root *yaml.Node, loc []any) (*yaml.Node, ctx) {
	n := root
	var c ctx
	found := true
	for i, e := range loc {
		switch e := e.(type) {
		case string:
			c = c.key(e)
			if found {
				if v := lookup(n, e); v != nil {
					n = v
				} else {
					found = false
				}
			}
		case int:
			c = c.index(e)
			if found {
				if n.Kind == yaml.SequenceNode && e >= 0 && e < len(n.Content) {
					n = unalias(n.Content[e])
				} else {
					found = false
				}
			}
			if parent, ok := loc[max(i-1, 0)].(string); ok && (parent == "blocks" || parent == "loop_blocks") {
				c.block = ""
				if found {
					if l := lookup(n, "label"); l != nil && isText(l) {
						c.block = l.Value
					}
				}
			}
		}
	}
	return n, c
}

// lookup returns the value of key in a mapping (merged keys included), or
// nil. Merges are followed for a bounded number of mappings: a mapping
// that merges itself twice would otherwise double the work at each level.
func lookup(m *yaml.Node, key string) *yaml.Node {
	budget := 1000
	var find func(m *yaml.Node, depth int) *yaml.Node
	find = func(m *yaml.Node, depth int) *yaml.Node {
		budget--
		if m == nil || m.Kind != yaml.MappingNode || depth > maxDepth || budget < 0 {
			return nil
		}
		var merged []*yaml.Node
		for i := 0; i+1 < len(m.Content); i += 2 {
			k := unalias(m.Content[i])
			if k == nil || k.Kind != yaml.ScalarNode {
				continue
			}
			if k.ShortTag() == "!!merge" {
				merged = append(merged, m.Content[i+1])
				continue
			}
			if k.Value == key {
				return unalias(m.Content[i+1])
			}
		}
		for _, v := range merged {
			v = unalias(v)
			targets := []*yaml.Node{v}
			if v != nil && v.Kind == yaml.SequenceNode {
				targets = v.Content
			}
			for _, t := range targets {
				if found := find(unalias(t), depth+1); found != nil {
					return found
				}
			}
		}
		return nil
	}
	return find(m, 0)
}

func lowerFirst(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError || !unicode.IsUpper(r) {
		return s
	}
	// Keep acronyms ("URL ...") as they are.
	if next, _ := utf8.DecodeRuneInString(s[size:]); unicode.IsUpper(next) {
		return s
	}
	return string(unicode.ToLower(r)) + s[size:]
}

// loopVariables are defined inside the blocks of a loop: the item of the
// iteration (under two names) and its index.
var loopVariables = map[string]bool{"current_value": true, "current_item": true, "current_index": true}

// builtins are the names the service defines for every run's templates,
// and the literals of its template language.
var builtins = map[string]bool{
	"workflow_run_id": true, "workflow_id": true, "workflow_permanent_id": true, "workflow_title": true,
	"true": true, "false": true, "none": true, "True": true, "False": true, "None": true,
}

// checkReferences checks every {{ reference }} of the block texts against
// the names the service defines for a run of the definition: its
// parameter keys; every block's label (the service registers each label
// as a variable holding the block's output, and for a loop its
// current_value, current_index and current_item) and <label>_output; the
// loop variables inside loops; and the built-ins. Only the name a
// reference starts with is checked: what follows it (fields, indexes, or a
// filter the hosted service's Jinja accepts) depends on values known at
// run time.
//
// The service does not check references when it stores an agent (a run
// fails when one has no value), so a name the definition does not define
// is unvouched (a warning by default), not an error; a reference that is
// not closed with }} is an error, as no run could render it.
func (w *walker) checkReferences(def *client.AgentDefinition) {
	if len(w.texts) == 0 {
		return
	}
	defined := map[string]bool{}
	for _, p := range def.WorkflowDefinition.Parameters {
		if p.Key != "" {
			defined[p.Key] = true
		}
	}
	var addBlocks func(client.Blocks)
	addBlocks = func(bs client.Blocks) {
		for _, b := range bs {
			if b == nil {
				continue
			}
			if l := b.Base().Label; l != "" {
				defined[l], defined[l+"_output"] = true, true
			}
			switch x := b.(type) {
			case *client.ForLoopBlock:
				addBlocks(x.LoopBlocks)
			case *client.WhileLoopBlock:
				addBlocks(x.LoopBlocks)
			}
		}
	}
	addBlocks(def.WorkflowDefinition.Blocks)
	names := make([]string, 0, len(defined))
	for k := range defined {
		names = append(names, k)
	}
	sort.Strings(names)

	for _, t := range w.texts {
		field := t.ctx.name()
		for _, r := range tmpl.References(t.value) {
			line, col := textPosition(t.node, t.value, r.Offset)
			pos := &yaml.Node{Line: line, Column: col}
			switch {
			case !strings.HasSuffix(r.Text, "}}"):
				w.problem(pos, t.ctx, "%q: %s is not closed with }}", field, shorten(r.Text))
			case r.Root == "" || defined[r.Root] || builtins[r.Root]:
			case loopVariables[r.Root]:
				if t.ctx.loops == 0 {
					w.unvouched(pos, t.ctx, "%s in %q: %s is only defined inside the blocks of a loop", r.Text, field, r.Root)
				}
			default:
				candidates := names
				if t.ctx.loops > 0 {
					candidates = append(append([]string{}, names...), "current_value", "current_item", "current_index")
				}
				w.unvouched(pos, t.ctx, "%s in %q is not defined: no parameter key, block label, block output (<label>_output) or loop variable has that name%s",
					r.Text, field, suggest(r.Root, candidates))
			}
		}
	}
}

// textPosition returns the line and column of the byte at offset in a
// scalar's value. Only a literal block (|) keeps the file's lines in its
// value, and not their indentation: there the line is exact and the column
// unknown (0). For other styles the scalar's own position is the best
// there is.
func textPosition(n *yaml.Node, value string, offset int) (line, col int) {
	if n.Style&yaml.LiteralStyle == 0 {
		return n.Line, n.Column
	}
	return n.Line + 1 + strings.Count(value[:offset], "\n"), 0
}

// shorten cuts a long text for a message.
func shorten(s string) string {
	if len(s) <= 40 {
		return s
	}
	cut := 40
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
