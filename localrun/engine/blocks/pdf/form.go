package pdf

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/abctl/abctl/localrun/engine/internal/text"
)

// Field is a field of a PDF's form as pdf_fill sees it.
type Field struct {
	Name    string   `json:"name"`
	AltName string   `json:"description,omitempty"` // the field's tooltip
	Type    string   `json:"type"`                  // text, date, checkbox, radio, combobox, listbox
	Options []string `json:"options,omitempty"`
	Value   any      `json:"current_value,omitempty"`
	Locked  bool     `json:"read_only,omitempty"`
	// Editable: a combo box that takes a value not among its options.
	Editable bool `json:"-"`
}

// ExplicitValues maps a payload's keys to the form's fields by their
// names. unknown are the keys that name no field; a value a field cannot
// take is an error.
func ExplicitValues(obj map[string]any, fields []Field) (values map[string]any, unknown []string, err error) {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	values = map[string]any{}
	for _, k := range keys {
		f := FindField(k, fields)
		if f == nil {
			unknown = append(unknown, k)
			continue
		}
		v, err := FieldValue(f, obj[k])
		if err != nil {
			return nil, nil, fmt.Errorf("payload %q: %v", k, err)
		}
		values[f.Name] = v
	}
	return values, unknown, nil
}

// MapValues takes the values a model proposed for the form's fields (by
// field name or description): values are those the fields take, by the
// fields' names; skipped are the others, each {"field_name", "reason"}, in
// the order of their names.
func MapValues(proposed map[string]any, fields []Field) (values map[string]any, skipped []any) {
	values = map[string]any{}
	skipped = []any{}
	names := make([]string, 0, len(proposed))
	for k := range proposed {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		f := FindField(name, fields)
		if f == nil {
			skipped = append(skipped, map[string]any{"field_name": name, "reason": "no field of the form has this name"})
			continue
		}
		v, err := FieldValue(f, proposed[name])
		if err != nil {
			skipped = append(skipped, map[string]any{"field_name": name, "reason": err.Error()})
			continue
		}
		values[f.Name] = v
	}
	return values, skipped
}

// FindField finds a field by its name, else its description (tooltip),
// else either without regard to case when only one field matches.
func FindField(key string, fields []Field) *Field {
	key = strings.TrimSpace(key)
	for i := range fields {
		if fields[i].Name == key {
			return &fields[i]
		}
	}
	for i := range fields {
		if fields[i].AltName != "" && fields[i].AltName == key {
			return &fields[i]
		}
	}
	var found *Field
	for i := range fields {
		if strings.EqualFold(fields[i].Name, key) || (fields[i].AltName != "" && strings.EqualFold(fields[i].AltName, key)) {
			if found != nil {
				return nil
			}
			found = &fields[i]
		}
	}
	return found
}

// FieldValue converts a value of the payload to what field f takes: a
// text, a bool (checkbox), one of its options (radio, combobox) or a list
// of them (listbox).
func FieldValue(f *Field, v any) (any, error) {
	if f.Locked {
		return nil, fmt.Errorf("the field %q is read-only", f.Name)
	}
	switch f.Type {
	case "checkbox":
		switch x := v.(type) {
		case bool:
			return x, nil
		case float64:
			return x != 0, nil
		case string:
			switch strings.ToLower(strings.TrimSpace(x)) {
			case "true", "yes", "y", "on", "1", "x", "checked":
				return true, nil
			case "false", "no", "n", "off", "0", "", "unchecked":
				return false, nil
			}
		case nil:
			return false, nil
		}
		return nil, fmt.Errorf("the checkbox %q takes true or false, not %s", f.Name, shortJSON(v))
	case "radio", "combobox":
		s, ok := ScalarText(v)
		if !ok {
			return nil, fmt.Errorf("the field %q takes one of %s, not %s", f.Name, QuoteList(f.Options), shortJSON(v))
		}
		if opt, ok := option(s, f.Options); ok {
			return opt, nil
		}
		if f.Editable || (s == "" && f.Type == "combobox") {
			return s, nil
		}
		return nil, fmt.Errorf("the field %q takes one of %s, not %q", f.Name, QuoteList(f.Options), s)
	case "listbox":
		var items []any
		switch x := v.(type) {
		case []any:
			items = x
		default:
			items = []any{x}
		}
		out := make([]string, 0, len(items))
		for _, it := range items {
			s, ok := ScalarText(it)
			opt, found := option(s, f.Options)
			if !ok || !found {
				return nil, fmt.Errorf("the list box %q takes options among %s, not %s", f.Name, QuoteList(f.Options), shortJSON(it))
			}
			out = append(out, opt)
		}
		return out, nil
	}
	s, ok := ScalarText(v)
	if !ok {
		return nil, fmt.Errorf("the field %q takes a text, not %s", f.Name, shortJSON(v))
	}
	return s, nil
}

// ScalarText is a text, number or bool as text.
func ScalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(x), true
	case nil:
		return "", true
	}
	return "", false
}

// option finds s among options, without regard to case.
func option(s string, options []string) (string, bool) {
	for _, o := range options {
		if o == s {
			return o, true
		}
	}
	for _, o := range options {
		if strings.EqualFold(o, strings.TrimSpace(s)) {
			return o, true
		}
	}
	return "", false
}

func shortJSON(v any) string {
	b, _ := json.Marshal(v)
	return text.Clip(string(b), 80)
}

// Quoted is each of ss in Go's double quotes.
func Quoted(ss []string) []string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return q
}

// QuoteList is ss quoted, apart by commas.
func QuoteList(ss []string) string { return strings.Join(Quoted(ss), ", ") }

// FieldNames lists the names of fields for a message, clipped.
func FieldNames(fields []Field) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	return text.Clip(QuoteList(names), 2000)
}
