package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// everyBlockAgent returns an agent in the response shape with a block of
// every type (and an UnknownBlock), every field of which, and of the
// agent, is set: pointers point, slices and maps have an element, and
// loops hold a block.
func everyBlockAgent(t *testing.T) *Agent {
	t.Helper()
	a := new(Agent)
	fillValue(reflect.ValueOf(a).Elem(), 0)
	var bs Blocks
	for _, bt := range BlockTypes {
		b := newBlock(bt)
		fillValue(reflect.ValueOf(b).Elem(), 0)
		b.Base().Label = "Block_" + string(bt)
		bs = append(bs, b)
	}
	u := &UnknownBlock{Type: "web_search", Raw: json.RawMessage(`{"block_type":"web_search","label":"Search","parameters":[{"key":"k","parameter_type":"workflow"}],"output_parameter":{"key":"Search_output","parameter_type":"output"}}`)}
	fillValue(reflect.ValueOf(&u.base).Elem(), 0)
	a.WorkflowDefinition.Blocks = append(bs, u)
	if _, err := json.Marshal(a); err != nil {
		t.Fatalf("the filled agent does not encode: %v", err)
	}
	return a
}

// fillValue sets every settable field reachable from v to a value that
// is not zero; Blocks get one navigation block, up to a depth.
func fillValue(v reflect.Value, depth int) {
	if !v.CanSet() {
		return
	}
	switch v.Type() {
	case reflect.TypeFor[json.RawMessage]():
		v.SetBytes([]byte(`{"k":[1]}`))
		return
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)))
		return
	case reflect.TypeFor[Blocks]():
		if depth < 2 {
			b := new(NavigationBlock)
			fillValue(reflect.ValueOf(b).Elem(), depth+1)
			v.Set(reflect.ValueOf(Blocks{b}))
		}
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("s")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int:
		v.SetInt(1)
	case reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Interface:
		v.Set(reflect.ValueOf(map[string]any{"k": []any{"v", map[string]any{"n": 1.0}}}))
	case reflect.Pointer:
		if depth < 3 {
			p := reflect.New(v.Type().Elem())
			fillValue(p.Elem(), depth+1)
			v.Set(p)
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fillValue(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		e := reflect.New(v.Type().Elem()).Elem()
		fillValue(e, depth+1)
		m.SetMapIndex(reflect.ValueOf("k").Convert(v.Type().Key()), e)
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			fillValue(v.Field(i), depth)
		}
	}
}

// references returns the addresses of the memory that v refers to and a
// program could change through it: what its pointers point to, the
// arrays of its slices, its maps, by where they are in v. Strings cannot be
// changed and are left out, and so are time.Time's (its location is
// shared by design) and empty slices (which may all point to the same
// zero-sized place).
func references(v reflect.Value, at string, out map[uintptr]string) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		out[v.Pointer()] = at
		references(v.Elem(), at, out)
	case reflect.Interface:
		if !v.IsNil() {
			references(v.Elem(), at, out)
		}
	case reflect.Slice:
		if v.IsNil() || v.Cap() == 0 {
			return
		}
		out[v.Pointer()] = at
		for i := range v.Len() {
			references(v.Index(i), fmt.Sprintf("%s[%d]", at, i), out)
		}
	case reflect.Map:
		if v.IsNil() {
			return
		}
		out[v.Pointer()] = at
		for it := v.MapRange(); it.Next(); {
			references(it.Value(), fmt.Sprintf("%s[%v]", at, it.Key()), out)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			return
		}
		for i := range v.NumField() {
			references(v.Field(i), at+"."+v.Type().Field(i).Name, out)
		}
	}
}

// mutate changes every value reachable from v that a program could change
// through it: strings, numbers and booleans in place, and what pointers,
// slices and maps refer to.
func mutate(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(v.String() + "_changed")
		}
	case reflect.Bool:
		if v.CanSet() {
			v.SetBool(!v.Bool())
		}
	case reflect.Int:
		if v.CanSet() {
			v.SetInt(v.Int() + 1)
		}
	case reflect.Uint8:
		if v.CanSet() {
			v.SetUint(uint64(v.Uint()) ^ 1)
		}
	case reflect.Float64:
		if v.CanSet() {
			v.SetFloat(v.Float() + 1)
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			mutate(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			mutate(v.Index(i))
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			e := reflect.New(it.Value().Type()).Elem()
			e.Set(it.Value())
			mutate(e)
			v.SetMapIndex(it.Key(), e)
		}
		if v.Type().Key().Kind() == reflect.String && v.Len() > 0 {
			v.SetMapIndex(reflect.ValueOf("added").Convert(v.Type().Key()), reflect.New(v.Type().Elem()).Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			mutate(v.Field(i))
		}
	}
}

func TestDefinitionSharesNothing(t *testing.T) {
	for name, a := range map[string]*Agent{"every block type": everyBlockAgent(t), "agent_response.json": loadAgentResponse(t)} {
		t.Run(name, func(t *testing.T) {
			before, _ := json.Marshal(a)
			def := a.Definition()

			// Nothing a refers to is reachable from the definition.
			own := map[uintptr]string{}
			references(reflect.ValueOf(a), "agent", own)
			theirs := map[uintptr]string{}
			references(reflect.ValueOf(def), "definition", theirs)
			for p, at := range theirs {
				if mine, ok := own[p]; ok {
					t.Errorf("%s shares memory with %s", at, mine)
				}
			}

			// Changing everything in the definition leaves a as it was.
			mutate(reflect.ValueOf(def))
			if after, _ := json.Marshal(a); !bytes.Equal(before, after) {
				i := 0
				for i < len(before) && i < len(after) && before[i] == after[i] {
					i++
				}
				from := max(i-60, 0)
				t.Errorf("changing the definition changed the agent at byte %d:\nbefore ...%.120s\nafter  ...%.120s", i, before[from:], after[from:])
			}
		})
	}
}

// TestEveryBlockAgentHasEveryType keeps the fixture above honest: it has a
// block of every type, and the definition keeps them all.
func TestEveryBlockAgentHasEveryType(t *testing.T) {
	a := everyBlockAgent(t)
	seen := map[BlockType]bool{}
	a.Definition().WorkflowDefinition.Blocks.Walk(func(b Block) { seen[b.BlockType()] = true })
	var missing []string
	for _, bt := range BlockTypes {
		if !seen[bt] {
			missing = append(missing, string(bt))
		}
	}
	if len(missing) > 0 || !seen["web_search"] {
		t.Errorf("the definition lacks blocks of the types %s (or web_search)", strings.Join(missing, ", "))
	}
}

func TestCopyBlock(t *testing.T) {
	for _, bt := range BlockTypes {
		b := newBlock(bt)
		fillValue(reflect.ValueOf(b).Elem(), 0)
		want, _ := json.Marshal(b)

		// A shallow copy is a new block that is equal to b.
		shallow := copyBlock(b, false)
		if shallow == b || !reflect.DeepEqual(shallow, b) {
			t.Errorf("%s: the shallow copy is b itself or differs from it", bt)
		}
		shallow.Base().Label = "changed"
		if b.Base().Label == "changed" {
			t.Errorf("%s: setting a field of the shallow copy set b's", bt)
		}

		// A deep copy is equal to b and shares nothing with it.
		deep := copyBlock(b, true)
		if !reflect.DeepEqual(deep, b) {
			t.Errorf("%s: the deep copy differs from b", bt)
		}
		own, theirs := map[uintptr]string{}, map[uintptr]string{}
		references(reflect.ValueOf(b), "block", own)
		references(reflect.ValueOf(deep), "copy", theirs)
		for p, at := range theirs {
			if mine, ok := own[p]; ok {
				t.Errorf("%s: %s shares memory with %s", bt, at, mine)
			}
		}
		mutate(reflect.ValueOf(deep))
		if got, _ := json.Marshal(b); !bytes.Equal(got, want) {
			t.Errorf("%s: changing the deep copy changed b", bt)
		}
	}
	// Nil blocks and blocks of other packages' types come back as they are.
	var nav *NavigationBlock
	if got := copyBlock(nav, true); got != Block(nav) {
		t.Errorf("copyBlock of a nil *NavigationBlock = %#v", got)
	}
	if got := copyBlock(nil, true); got != nil {
		t.Errorf("copyBlock(nil) = %#v", got)
	}
}

func TestParameterRecords(t *testing.T) {
	for _, c := range []struct {
		in   string
		keys []string
		ok   bool
	}{
		{`[{"key":"a","parameter_type":"workflow"},{"key":"b","parameter_type":"output"}]`, []string{"a", "b"}, true},
		{`[]`, nil, true},
		{`null`, nil, true},
		{`[{"key":"a"}]`, nil, false},                           // no type: not a record
		{`[{"parameter_type":"workflow"}]`, nil, false},         // no key
		{`{"key":"a","parameter_type":"workflow"}`, nil, false}, // not a list
		{`["a"]`, nil, false},
	} {
		ps, ok := ParameterRecords([]byte(c.in))
		if ok != c.ok || !reflect.DeepEqual(ParameterKeys(ps), c.keys) {
			t.Errorf("ParameterRecords(%s) = %v, %v; want keys %v, %v", c.in, ParameterKeys(ps), ok, c.keys, c.ok)
		}
	}
}

func TestBlockParameterKeys(t *testing.T) {
	for _, bt := range BlockTypes {
		b := newBlock(bt)
		_, has := reflect.TypeOf(b).Elem().FieldByName("ParameterKeys")
		keys := BlockParameterKeys(b)
		if (keys != nil) != has {
			t.Errorf("%s: BlockParameterKeys = %v, the struct has ParameterKeys: %v", bt, keys, has)
			continue
		}
		if keys != nil {
			*keys = []string{"x"}
			if got := reflect.ValueOf(b).Elem().FieldByName("ParameterKeys").Interface(); !reflect.DeepEqual(got, []string{"x"}) {
				t.Errorf("%s: setting through BlockParameterKeys gave %v", bt, got)
			}
		}
	}
	var nav *NavigationBlock
	if BlockParameterKeys(nav) != nil || BlockParameterKeys(&UnknownBlock{}) != nil || BlockParameterKeys(nil) != nil {
		t.Error("BlockParameterKeys of a nil or unknown block is not nil")
	}
}
