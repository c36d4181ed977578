package agentfile

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/abctl/abctl/client"
)

// The walker checks a document's node tree against the schema, value by
// value, and writes the JSON of what is valid; problems are collected, not
// returned, so that one pass finds them all. A value with a problem is
// left out (or, in a list, replaced by a placeholder, so that the indexes
// the shared validator reports stay those of the file).

// maxNodes bounds the values one document may have once its aliases are
// expanded (a "billion laughs" file is refused quickly); real agents have
// hundreds, a very large one a few thousand.
const maxNodes = 50_000

// maxDepth bounds nesting, which also stops an alias that contains itself.
const maxDepth = 256

// maxJSON bounds the JSON a document expands to (a long text aliased many
// times).
const maxJSON = 8 << 20

// walker checks one document against the schema and writes the JSON of its
// definition, collecting problems as it goes.
type walker struct {
	schema   *schema
	file     string
	agent    string
	buf      bytes.Buffer
	problems Problems
	// reported are the paths that have a problem, and quiet the subtrees
	// left out as a whole: the shared validator's findings at or under
	// them are about something already reported.
	reported []string
	quiet    []string
	texts    []text // block texts holding references, checked once every name is known
	mode     Validation
	budget   int
	depth    int
	tooBig   bool
}

// ctx is where the walker is in the document.
type ctx struct {
	path      string           // workflow_definition.blocks[2].url
	block     string           // the label of the innermost block
	blockType client.BlockType // its type
	inBlock   bool
	field     string // the block's own key being walked, for references
	loops     int    // loops around the current block
}

func (c ctx) key(k string) ctx {
	if c.path == "" {
		c.path = k
	} else {
		c.path += "." + k
	}
	if c.inBlock && c.field == "" {
		c.field = k
	}
	return c
}

func (c ctx) index(i int) ctx {
	c.path += "[" + strconv.Itoa(i) + "]"
	return c
}

// name is the last key of the path, for messages.
func (c ctx) name() string {
	p := c.path
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		p = p[i+1:]
	}
	return p
}

// text is a string of a block that holds "{{".
type text struct {
	node  *yaml.Node
	value string
	ctx   ctx
}

type pair struct{ key, value *yaml.Node }

// problem reports an error at n.
func (w *walker) problem(n *yaml.Node, c ctx, format string, args ...any) {
	w.report(n, c, SeverityError, fmt.Sprintf(format, args...))
	if c.path != "" { // a problem of the whole document hides nothing
		w.reported = append(w.reported, c.path)
	}
}

// unvouched reports what the service accepts but abctl cannot vouch for
// (a key the service ignores, a block type abctl does not know, a
// reference to a name the agent does not define): an error with
// ValidateStrict, a warning with ValidateWarn, nothing with
// ValidateIgnore.
func (w *walker) unvouched(n *yaml.Node, c ctx, format string, args ...any) {
	switch w.mode {
	case ValidateStrict:
		w.problem(n, c, format, args...)
	case ValidateWarn:
		w.report(n, c, SeverityWarning, fmt.Sprintf(format, args...))
	}
}

// typo reports an unknown key or block type close to a known one, likelier
// a typo than something newer than abctl: an error, but with
// ValidateIgnore, where it is left to the service as any unknown key is.
func (w *walker) typo(n *yaml.Node, c ctx, format string, args ...any) {
	if w.mode != ValidateIgnore {
		w.problem(n, c, format, args...)
	}
}

// report adds a problem of severity sev at n (the whole document when n
// is nil).
func (w *walker) report(n *yaml.Node, c ctx, sev Severity, msg string) {
	p := Problem{Severity: sev, File: w.file, Agent: w.agent, Block: c.block, Path: c.path, Msg: msg}
	if n != nil {
		p.Line, p.Column = n.Line, n.Column
	}
	w.problems = append(w.problems, p)
}

func (w *walker) mismatch(n *yaml.Node, c ctx, want string) {
	w.problem(n, c, "%q must be %s, not %s", c.name(), want, describe(n))
}

// spend counts one more value against the document's budget.
func (w *walker) spend(n *yaml.Node, c ctx) bool {
	if w.tooBig {
		return false
	}
	w.budget--
	if w.budget < 0 || w.depth > maxDepth || w.buf.Len() > maxJSON {
		w.tooBig = true
		w.problem(n, c, "the document nests too deeply or is too large once its aliases are expanded")
		return false
	}
	return true
}

// pairs returns the key/value pairs of a mapping, with YAML merge keys
// (<<) applied: keys written in the mapping win over merged ones, and
// earlier merged mappings over later ones. Keys that are not strings and
// repeated keys are problems; the first of a repeated key is kept.
func (w *walker) pairs(m *yaml.Node, c ctx) []pair {
	if !w.spend(m, c) {
		return nil
	}
	w.depth++
	defer func() { w.depth-- }()
	out := make([]pair, 0, len(m.Content)/2)
	seen := make(map[string]*yaml.Node, len(m.Content)/2)
	var merged []pair
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := unalias(m.Content[i]), m.Content[i+1]
		if k == nil {
			continue
		}
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merged = append(merged, w.mergePairs(v, c)...)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			w.problem(k, c, "a key must be a string, not %s", describe(k))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			w.problem(k, c.key(k.Value), "duplicate key %q (first at line %d)", k.Value, first.Line)
			continue
		}
		seen[k.Value] = k
		out = append(out, pair{k, v})
	}
	for _, p := range merged {
		if _, ok := seen[p.key.Value]; !ok {
			seen[p.key.Value] = p.key
			out = append(out, p)
		}
	}
	return out
}

func (w *walker) mergePairs(v *yaml.Node, c ctx) []pair {
	v = unalias(v)
	switch {
	case v == nil:
	case v.Kind == yaml.MappingNode:
		return w.pairs(v, c)
	case v.Kind == yaml.SequenceNode:
		var out []pair
		for _, e := range v.Content {
			if e = unalias(e); e != nil && e.Kind == yaml.MappingNode {
				out = append(out, w.pairs(e, c)...)
			} else {
				w.problem(e, c, "<< merges mappings, not %s", describe(e))
			}
		}
		return out
	}
	w.problem(v, c, "<< merges a mapping or a list of mappings, not %s", describe(v))
	return nil
}

// value writes n as JSON of shape s and reports whether it wrote anything:
// null (which means "not set") and values with a problem are left out.
func (w *walker) value(n *yaml.Node, s *shape, c ctx) bool {
	if !w.spend(n, c) {
		return false
	}
	n = unalias(n)
	if n == nil || isNull(n) {
		return false
	}
	switch s.kind {
	case kindString:
		if !isText(n) {
			w.mismatch(n, c, "a string")
			return false
		}
		appendJSONString(&w.buf, n.Value)
		w.noteText(n, n.Value, c)
	case kindBool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
			w.mismatch(n, c, "true or false")
			return false
		}
		w.buf.WriteString(strconv.FormatBool(b))
	case kindInt:
		i, ok := int64(0), false
		if n.Kind == yaml.ScalarNode {
			i, ok = scalarInt(n)
		}
		if !ok {
			w.mismatch(n, c, "a whole number")
			return false
		}
		w.buf.WriteString(strconv.FormatInt(i, 10))
	case kindFloat:
		if _, ok := scalarFloat(n); !ok || n.Kind != yaml.ScalarNode {
			w.mismatch(n, c, "a number")
			return false
		}
		appendNumber(&w.buf, n)
	case kindList:
		if n.Kind != yaml.SequenceNode {
			w.mismatch(n, c, "a list")
			return false
		}
		w.list(n, s.elem, c)
	case kindMap:
		if n.Kind != yaml.MappingNode {
			w.mismatch(n, c, "a mapping")
			return false
		}
		w.mapping(n, s.elem, c)
	case kindObject:
		if n.Kind != yaml.MappingNode {
			w.mismatch(n, c, "a mapping")
			return false
		}
		w.objectFromPairs(n, w.pairs(n, c), s.obj, c, nil)
	case kindBlocks:
		if n.Kind != yaml.SequenceNode {
			w.mismatch(n, c, "a list of blocks")
			return false
		}
		w.blocks(n, c)
	case kindProxy:
		switch {
		case isText(n):
			appendJSONString(&w.buf, n.Value)
		case n.Kind == yaml.MappingNode:
			w.raw(n, c)
		default:
			w.mismatch(n, c, "a location name or a mapping (country, subdivision, city, or url)")
			return false
		}
	case kindRaw:
		w.raw(n, c)
	}
	return true
}

// placeholder writes a value of shape s where a list element had a
// problem, so that the indexes of the elements after it stay those of the
// file.
func (w *walker) placeholder(s *shape) {
	switch s.kind {
	case kindString:
		w.buf.WriteString(`""`)
	case kindBool:
		w.buf.WriteString("false")
	case kindInt, kindFloat:
		w.buf.WriteString("0")
	case kindList, kindBlocks:
		w.buf.WriteString("[]")
	case kindMap, kindObject:
		w.buf.WriteString("{}")
	default:
		w.buf.WriteString("null")
	}
}

func (w *walker) list(n *yaml.Node, elem *shape, c ctx) {
	w.buf.WriteByte('[')
	for i, e := range n.Content {
		if i > 0 {
			w.buf.WriteByte(',')
		}
		ec := c.index(i)
		if elem.kind == kindRaw {
			w.raw(e, ec)
			continue
		}
		mark := w.buf.Len()
		if d := unalias(e); d != nil && isNull(d) {
			w.problem(d, ec, "%q must not be null", ec.name())
			w.placeholder(elem)
			continue
		}
		if !w.value(e, elem, ec) {
			w.buf.Truncate(mark)
			w.placeholder(elem)
		}
	}
	w.buf.WriteByte(']')
}

// mapping writes a mapping of user keys (headers, error codes, a model's
// settings).
func (w *walker) mapping(n *yaml.Node, elem *shape, c ctx) {
	w.buf.WriteByte('{')
	first := true
	for _, p := range w.pairs(n, c) {
		kc := c.key(p.key.Value)
		mark := w.buf.Len()
		if !first {
			w.buf.WriteByte(',')
		}
		appendJSONString(&w.buf, p.key.Value)
		w.buf.WriteByte(':')
		switch {
		case elem.kind == kindRaw:
			w.raw(p.value, kc)
		case isNull(unalias(p.value)):
			w.problem(unalias(p.value), kc, "%q must not be null", p.key.Value)
			w.buf.Truncate(mark)
			continue
		case !w.value(p.value, elem, kc):
			w.buf.Truncate(mark)
			continue
		}
		first = false
	}
	w.buf.WriteByte('}')
}

// objectFromPairs writes a mapping with the keys of o. extra are keys
// known at this place that are not o's (the abctl-only keys at the top),
// for suggestions.
func (w *walker) objectFromPairs(n *yaml.Node, pairs []pair, o *object, c ctx, extra []string) {
	w.buf.WriteByte('{')
	first := true
	present := make(map[string]bool, len(pairs))
	for _, p := range pairs {
		key := p.key.Value
		kc := c.key(key)
		f := o.byName[key]
		if f == nil || o.block && responseOnly[key] != "" {
			w.unknownKey(p.key, kc, o, extra)
			continue
		}
		present[key] = true
		if f.shape.kind == kindBlocks && key == "loop_blocks" {
			kc.loops++
		}
		mark := w.buf.Len()
		if !first {
			w.buf.WriteByte(',')
		}
		appendJSONString(&w.buf, key)
		w.buf.WriteByte(':')
		if !w.value(p.value, f.shape, kc) {
			w.buf.Truncate(mark)
			if v := unalias(p.value); f.required && v != nil && isNull(v) {
				w.problem(v, kc, "%q is required and must not be null", key)
			}
			continue
		}
		first = false
		if allowed := enums[o.name+"."+key]; allowed != nil {
			w.checkEnum(unalias(p.value), kc, allowed)
		}
	}
	for _, f := range o.fields {
		if f.required && !present[f.name] {
			w.problem(n, c.key(f.name), "missing required key %q", f.name)
		}
	}
	w.buf.WriteByte('}')
}

// responseOnly are the keys of blocks that the client reads from the
// service's answers but that are not part of a definition: the service
// ignores them in one, so an agent file gives them no meaning either. The
// value says what to write instead.
var responseOnly = map[string]string{
	"parameters":       "list the keys of the parameters the block uses in parameter_keys",
	"output_parameter": "the service makes every block's <label>_output itself",
	"loop_over":        "name the parameter to loop over in loop_over_parameter_key",
}

// unknownKey reports a key that o does not have (c is its place), which
// the caller leaves out of what is sent, as the service ignores keys it
// does not know: a likely typo of one of o's keys (or of extra, the
// abctl-only keys at the top) is a typo, with a suggestion; other keys are
// unvouched.
func (w *walker) unknownKey(k *yaml.Node, c ctx, o *object, extra []string) {
	key := k.Value
	if hint := responseOnly[key]; o.block && hint != "" {
		w.unvouched(k, c, "%q is a field of the service's answers, which it ignores in a definition (%s)", key, hint)
		return
	}
	candidates := slices.DeleteFunc(slices.Concat(o.names, extra), func(n string) bool { return o.block && responseOnly[n] != "" })
	if hint := suggest(key, candidates); hint != "" {
		w.typo(k, c, "unknown key %q%s", key, hint)
		return
	}
	w.unvouched(k, c, "unknown key %q, which the service ignores", key)
}

// enums are the values a few keys may take, where a typo would otherwise
// reach the service.
var enums = map[string][]string{
	"parameter.parameter_type": {
		string(client.ParameterTypeWorkflow), string(client.ParameterTypeContext), string(client.ParameterTypeAWSSecret),
		string(client.ParameterTypeCredential), string(client.ParameterTypeOnePassword),
		string(client.ParameterTypeAzureVaultCredential), string(client.ParameterTypeBitwardenLoginCredential),
		string(client.ParameterTypeBitwardenSensitiveInformation), string(client.ParameterTypeBitwardenCreditCardData),
		string(client.ParameterTypeOutput), string(client.ParameterTypeAzureSecret),
	},
	"parameter.workflow_parameter_type": {
		string(client.WorkflowParameterString), string(client.WorkflowParameterInteger), string(client.WorkflowParameterFloat),
		string(client.WorkflowParameterBoolean), string(client.WorkflowParameterJSON), string(client.WorkflowParameterFileURL),
		string(client.WorkflowParameterCredentialID),
	},
}

func (w *walker) checkEnum(n *yaml.Node, c ctx, allowed []string) {
	for _, a := range allowed {
		if n.Value == a {
			return
		}
	}
	w.problem(n, c, "unknown %s %q%s; known: %s", c.name(), n.Value, suggest(n.Value, allowed), strings.Join(allowed, ", "))
}

func (w *walker) blocks(n *yaml.Node, c ctx) {
	w.buf.WriteByte('[')
	for i, e := range n.Content {
		if i > 0 {
			w.buf.WriteByte(',')
		}
		w.block(unalias(e), c.index(i))
	}
	w.buf.WriteByte(']')
}

// block writes one block, the object of its block_type. A block of a type
// abctl does not know is unvouched and written as it is (the client keeps
// it as an UnknownBlock); one whose type is missing, not a string, or a
// likely typo of a known type is reported and written as a placeholder
// with its label, so that the labels are still checked together.
func (w *walker) block(n *yaml.Node, c ctx) {
	c.inBlock, c.field, c.block, c.blockType = true, "", "", ""
	if n == nil || n.Kind != yaml.MappingNode {
		w.problem(n, c, "a block must be a mapping, not %s", describe(n))
		w.quiet = append(w.quiet, c.path)
		w.buf.WriteString(invalidBlock + "}")
		return
	}
	pairs := w.pairs(n, c)
	var typeNode, labelNode *yaml.Node
	for _, p := range pairs {
		switch p.key.Value {
		case "block_type":
			typeNode = unalias(p.value)
		case "label":
			labelNode = unalias(p.value)
		}
	}
	if labelNode != nil && isText(labelNode) {
		c.block = labelNode.Value
	}
	var o *object
	switch {
	case typeNode == nil || isNull(typeNode):
		w.problem(n, c.key("block_type"), "missing required key \"block_type\"")
	case !isText(typeNode):
		w.mismatch(typeNode, c.key("block_type"), "a string")
	case typeNode.Value == "":
		w.problem(typeNode, c.key("block_type"), "%q must not be empty", "block_type")
	default:
		c.blockType = client.BlockType(typeNode.Value)
		if o = w.schema.blocks[c.blockType]; o != nil {
			break
		}
		hint := suggest(typeNode.Value, w.schema.blockTypes)
		if hint == "" || w.mode == ValidateIgnore {
			// A type newer than abctl, such as one the service added: the
			// service takes it, so it is sent as written. Its label is
			// checked with the others, and its texts' references.
			w.unvouched(typeNode, c.key("block_type"), "block_type %q is not one abctl knows: only the block's label and references are checked", typeNode.Value)
			w.raw(n, c)
			return
		}
		w.typo(typeNode, c.key("block_type"), "unknown block_type %q%s; known: %s",
			typeNode.Value, hint, strings.Join(w.schema.blockTypes, ", "))
	}
	if o == nil {
		w.quiet = append(w.quiet, c.path)
		w.buf.WriteString(invalidBlock)
		if c.block != "" {
			w.buf.WriteString(`,"label":`)
			appendJSONString(&w.buf, c.block)
		}
		w.buf.WriteByte('}')
		return
	}
	w.objectFromPairs(n, pairs, o, c, nil)
}

// invalidBlock starts the placeholder of a block that has a problem: the
// client decodes it as a block of an unknown type.
const invalidBlock = `{"block_type":"agentfile_invalid_block"`

// raw writes any value as JSON: default values, schemas, request bodies.
func (w *walker) raw(n *yaml.Node, c ctx) {
	if !w.spend(n, c) {
		w.buf.WriteString("null")
		return
	}
	n = unalias(n)
	if n == nil {
		w.buf.WriteString("null")
		return
	}
	w.depth++
	defer func() { w.depth-- }()
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			w.buf.WriteString("null")
		case "!!bool":
			var b bool
			if n.Decode(&b) != nil {
				w.problem(n, c, "%q is not a boolean", n.Value)
			}
			w.buf.WriteString(strconv.FormatBool(b))
		case "!!int", "!!float":
			if !appendNumber(&w.buf, n) {
				w.problem(n, c, "%s is not a number JSON can hold", n.Value)
				w.buf.WriteString("null")
			}
		case "!!str", "!!timestamp", "!!binary":
			appendJSONString(&w.buf, n.Value)
			w.noteText(n, n.Value, c)
		default:
			w.problem(n, c, "the YAML tag %s has no JSON form", n.Tag)
			w.buf.WriteString("null")
		}
	case yaml.SequenceNode:
		w.buf.WriteByte('[')
		for i, e := range n.Content {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			w.raw(e, c.index(i))
		}
		w.buf.WriteByte(']')
	case yaml.MappingNode:
		w.buf.WriteByte('{')
		for i, p := range w.pairs(n, c) {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			appendJSONString(&w.buf, p.key.Value)
			w.buf.WriteByte(':')
			w.raw(p.value, c.key(p.key.Value))
		}
		w.buf.WriteByte('}')
	default:
		w.buf.WriteString("null")
	}
}

// noteText keeps a block's text that holds references, to check them once
// the whole definition is known. The code of a code block is Python, where
// "{{" is not a reference.
func (w *walker) noteText(n *yaml.Node, s string, c ctx) {
	if !c.inBlock || !strings.Contains(s, "{{") {
		return
	}
	if c.blockType == client.BlockTypeCode && c.field == "code" {
		return
	}
	w.texts = append(w.texts, text{node: n, value: s, ctx: c})
}
