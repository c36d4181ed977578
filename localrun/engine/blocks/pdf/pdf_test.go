package pdf

import (
	"reflect"
	"testing"
)

func TestParsePageRanges(t *testing.T) {
	for _, tc := range []struct {
		prompt string
		want   []Part
	}{
		{"1-2, 3, 4-end", []Part{{From: 1, Thru: 2}, {From: 3, Thru: 3}, {From: 4}}},
		{"invoice: 1-2; receipt = pages 3 to 4\nrest: 5-last", []Part{{Name: "invoice", From: 1, Thru: 2}, {Name: "receipt", From: 3, Thru: 4}, {Name: "rest", From: 5}}},
		{"Pages 2–3", []Part{{From: 2, Thru: 3}}},
	} {
		got, err := ParsePageRanges(tc.prompt)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %v %v, want %v", tc.prompt, got, err, tc.want)
		}
	}
	for _, prompt := range []string{"", "one file per invoice", "1-2, and the rest", "invoice: the first two pages", "-3"} {
		if got, err := ParsePageRanges(prompt); err == nil {
			t.Errorf("%q: %v, want an error", prompt, got)
		}
	}
}

func TestFieldValue(t *testing.T) {
	text := &Field{Name: "amount", Type: "text"}
	box := &Field{Name: "agree", Type: "checkbox"}
	radio := &Field{Name: "plan", Type: "radio", Options: []string{"basic", "pro"}}
	list := &Field{Name: "days", Type: "listbox", Options: []string{"Mon", "Tue"}}
	locked := &Field{Name: "id", Type: "text", Locked: true}
	for _, tc := range []struct {
		f    *Field
		v    any
		want any
	}{
		{text, 12.5, "12.5"},
		{text, "x", "x"},
		{box, "Yes", true},
		{box, false, false},
		{box, float64(0), false},
		{radio, "PRO", "pro"},
		{list, []any{"tue", "Mon"}, []string{"Tue", "Mon"}},
		{list, "Mon", []string{"Mon"}},
	} {
		got, err := FieldValue(tc.f, tc.v)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %v: %#v %v, want %#v", tc.f.Name, tc.v, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		f    *Field
		v    any
		want string
	}{
		{text, map[string]any{"a": 1.0}, `the field "amount" takes a text, not {"a":1}`},
		{box, "maybe", `the checkbox "agree" takes true or false, not "maybe"`},
		{radio, "gold", `the field "plan" takes one of "basic", "pro", not "gold"`},
		{list, []any{"Sun"}, `the list box "days" takes options among "Mon", "Tue", not "Sun"`},
		{locked, "1", `the field "id" is read-only`},
	} {
		if _, err := FieldValue(tc.f, tc.v); err == nil || err.Error() != tc.want {
			t.Errorf("%s %v: %v, want %q", tc.f.Name, tc.v, err, tc.want)
		}
	}
}

func TestFindField(t *testing.T) {
	fields := []Field{{Name: "full_name", AltName: "Full name"}, {Name: "Email"}, {Name: "email2", AltName: "EMAIL"}}
	for key, want := range map[string]string{"full_name": "full_name", "Full name": "full_name", "FULL_NAME": "full_name", "Email": "Email", "email2": "email2", "nothing": ""} {
		got := ""
		if f := FindField(key, fields); f != nil {
			got = f.Name
		}
		if got != want {
			t.Errorf("%q: %q, want %q", key, got, want)
		}
	}
	// "email" matches two fields without regard to case: none is chosen.
	if f := FindField("email", fields); f != nil {
		t.Errorf("an ambiguous key found %q", f.Name)
	}
}

func TestMapValues(t *testing.T) {
	fields := []Field{{Name: "full_name", AltName: "Full name"}, {Name: "agree", Type: "checkbox"}, {Name: "id", Locked: true}}
	values, skipped := MapValues(map[string]any{"Full name": "Ada", "agree": "yes", "id": "7", "phone": "1"}, fields)
	if want := map[string]any{"full_name": "Ada", "agree": true}; !reflect.DeepEqual(values, want) {
		t.Errorf("values %v, want %v", values, want)
	}
	want := []any{
		map[string]any{"field_name": "id", "reason": `the field "id" is read-only`},
		map[string]any{"field_name": "phone", "reason": "no field of the form has this name"},
	}
	if !reflect.DeepEqual(skipped, want) {
		t.Errorf("skipped %v, want %v", skipped, want)
	}
	if values, skipped := MapValues(nil, fields); len(values) != 0 || skipped == nil || len(skipped) != 0 {
		t.Errorf("nothing proposed: %v %#v, want no values and an empty list", values, skipped)
	}
}
