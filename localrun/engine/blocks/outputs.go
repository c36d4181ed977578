package blocks

import (
	"encoding/json"
	"fmt"
	"sync"
)

// outputs holds block outputs in the order they were first set.
type outputs struct {
	mu   sync.Mutex
	keys []string
	vals map[string]any
}

func newOutputs() *outputs { return &outputs{vals: map[string]any{}} }

func (o *outputs) set(key string, v any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

func (o *outputs) each(fn func(k string, v any)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, k := range o.keys {
		fn(k, o.vals[k])
	}
}

// MarshalJSON writes the object with its keys in order.
func (o *outputs) MarshalJSON() ([]byte, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	buf := []byte{'{'}
	for i, k := range o.keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, fmt.Errorf("output %s: %w", k, err)
		}
		buf = append(append(append(buf, kb...), ':'), vb...)
	}
	return append(buf, '}'), nil
}

// rawObject returns the object as JSON ({} when empty).
func (o *outputs) rawObject() json.RawMessage {
	b, err := o.MarshalJSON()
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

// json returns the object, or nil when it is empty.
func (o *outputs) json() json.RawMessage {
	if len(o.keys) == 0 {
		return nil
	}
	b, err := o.MarshalJSON()
	if err != nil {
		return nil
	}
	return b
}
