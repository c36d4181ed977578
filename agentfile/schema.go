package agentfile

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/abctl/abctl/client"
)

// The schema of an agent file is read from the client's wire types by
// reflection, from their json tags: a field added to a client struct is a
// known key here without a change in this package. Only what the tags
// cannot say is written down below (which lists the client fills in, and
// a few values kept as JSON in the client but checked as objects here).

// kind is what a value of the file must be.
type kind uint8

const (
	kindString kind = iota
	kindBool
	kindInt
	kindFloat
	kindList   // a sequence of elem
	kindMap    // a mapping of string keys to elem (user data keys)
	kindObject // a mapping with the known keys of obj
	kindRaw    // any JSON value, kept as written (default values, schemas, bodies)
	kindBlocks // a sequence of blocks, each an object chosen by its block_type
	kindProxy  // a proxy location: a name, or a mapping
)

// shape is the expected form of a value.
type shape struct {
	kind kind
	elem *shape  // kindList and kindMap
	obj  *object // kindObject
}

// object is a struct of the client seen as a mapping: its keys in
// declaration order.
type object struct {
	name   string // for messages: "agent", "parameter", "navigation block", ...
	block  bool   // the object of a block type
	fields []*field
	byName map[string]*field
	names  []string // the keys, for suggestions
}

type field struct {
	name     string
	shape    *shape
	required bool
}

func (o *object) add(f *field) {
	if _, dup := o.byName[f.name]; dup {
		return // an embedded struct's field shadowed by the outer one
	}
	o.fields = append(o.fields, f)
	o.byName[f.name] = f
	o.names = append(o.names, f.name)
}

// schema is every shape of an agent file.
type schema struct {
	agent      *object                      // client.AgentDefinition
	blocks     map[client.BlockType]*object // one per known block type
	blockTypes []string                     // the known block types, in the client's order
}

var loadSchema = sync.OnceValue(buildSchema)

var (
	typeRaw      = reflect.TypeFor[json.RawMessage]()
	typeBlocks   = reflect.TypeFor[client.Blocks]()
	typeProxy    = reflect.TypeFor[client.ProxyLocation]()
	typeCriteria = reflect.TypeFor[client.BranchCriteria]()
	unmarshaler  = reflect.TypeFor[json.Unmarshaler]()
)

// overrides gives a shape to fields the client keeps as raw JSON but whose
// form it knows: a branch's criteria decodes into a BranchCriteria.
var overrides = map[string]reflect.Type{
	"BranchCondition.criteria": typeCriteria,
}

// filledByClient are the list fields without omitempty that the client
// writes as [] when they are nil, so a file may leave them out.
var filledByClient = map[string]bool{
	"WorkflowDefinition.parameters": true,
	"WorkflowDefinition.blocks":     true,
}

type schemaBuilder struct {
	objects map[reflect.Type]*object
}

func buildSchema() *schema {
	b := &schemaBuilder{objects: map[reflect.Type]*object{}}
	s := &schema{
		agent:  b.object(reflect.TypeFor[client.AgentDefinition](), "agent"),
		blocks: map[client.BlockType]*object{},
	}
	for _, t := range client.BlockTypes {
		typ := blockStructType(t)
		if typ == nil {
			continue
		}
		// Each block type gets an object of its own: block_type first, as
		// the client writes it, then the struct's fields.
		o := &object{name: string(t) + " block", block: true, byName: map[string]*field{}}
		o.add(&field{name: "block_type", shape: &shape{kind: kindString}, required: true})
		for _, f := range b.object(typ, string(t)+" block").fields {
			o.add(f)
		}
		s.blocks[t] = o
		s.blockTypes = append(s.blockTypes, string(t))
	}
	return s
}

// blockStructType returns the struct the client decodes a block of type t
// into, found by decoding a minimal block: the client's union is the one
// place that knows it.
func blockStructType(t client.BlockType) reflect.Type {
	data, _ := json.Marshal([]map[string]string{{"block_type": string(t)}})
	var bs client.Blocks
	if json.Unmarshal(data, &bs) != nil || len(bs) != 1 {
		return nil
	}
	if _, unknown := bs[0].(*client.UnknownBlock); unknown {
		return nil
	}
	typ := reflect.TypeOf(bs[0])
	if typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	return typ
}

func (b *schemaBuilder) object(t reflect.Type, name string) *object {
	if o, ok := b.objects[t]; ok {
		return o
	}
	o := &object{name: name, byName: map[string]*field{}}
	b.objects[t] = o // before the fields: types may refer to themselves
	b.addFields(o, t)
	return o
}

func (b *schemaBuilder) addFields(o *object, t reflect.Type) {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				b.addFields(o, ft)
			}
			continue
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		ft := sf.Type
		if ot, ok := overrides[t.Name()+"."+name]; ok {
			ft = ot
		}
		optional := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero") ||
			ft.Kind() == reflect.Pointer || filledByClient[t.Name()+"."+name] || ft == typeBlocks
		o.add(&field{name: name, shape: b.shape(ft, name), required: !optional})
	}
}

func (b *schemaBuilder) shape(t reflect.Type, name string) *shape {
	switch t {
	case typeRaw:
		return &shape{kind: kindRaw}
	case typeBlocks:
		return &shape{kind: kindBlocks}
	case typeProxy:
		return &shape{kind: kindProxy}
	}
	if t.Kind() == reflect.Pointer {
		return b.shape(t.Elem(), name)
	}
	if t.Kind() != reflect.Struct && reflect.PointerTo(t).Implements(unmarshaler) {
		return &shape{kind: kindRaw}
	}
	switch t.Kind() {
	case reflect.String:
		return &shape{kind: kindString}
	case reflect.Bool:
		return &shape{kind: kindBool}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &shape{kind: kindInt}
	case reflect.Float32, reflect.Float64:
		return &shape{kind: kindFloat}
	case reflect.Slice, reflect.Array:
		return &shape{kind: kindList, elem: b.shape(t.Elem(), name)}
	case reflect.Map:
		return &shape{kind: kindMap, elem: b.shape(t.Elem(), name)}
	case reflect.Interface:
		return &shape{kind: kindRaw}
	case reflect.Struct:
		if reflect.PointerTo(t).Implements(unmarshaler) {
			// A struct with its own wire form (a timestamp): a scalar.
			return &shape{kind: kindRaw}
		}
		return &shape{kind: kindObject, obj: b.object(t, objectName(t, name))}
	}
	panic(fmt.Sprintf("agentfile: no shape for %s (field %s)", t, name))
}

// objectName names a nested struct for messages.
func objectName(t reflect.Type, field string) string {
	switch t.Name() {
	case "Parameter":
		return "parameter"
	case "WorkflowDefinition":
		return "workflow_definition"
	case "BranchCriteria":
		return "criteria"
	case "BranchCondition":
		return "branch"
	case "CodeBlockStep":
		return "code step"
	}
	return field
}
