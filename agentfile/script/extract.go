package script

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Extract is where a block's extracted data comes from: one Field per
// value of the data the model extracted when the script was recorded.
// Replay reads the same places and builds data of the same shape; when a
// place is gone, the model extracts again.
type Extract struct {
	Fields []Field `yaml:"fields" json:"fields"`
}

// Field types.
const (
	TypeString  = "string"
	TypeNumber  = "number"
	TypeInteger = "integer"
	TypeBoolean = "boolean"
	TypeNull    = "null"
	// TypeArray and TypeObject are empty lists and objects.
	TypeArray  = "array"
	TypeObject = "object"
)

// FieldTypes are the types of fields.
var FieldTypes = []string{TypeString, TypeNumber, TypeInteger, TypeBoolean, TypeNull, TypeArray, TypeObject}

// Field is one value of the extracted data.
type Field struct {
	// Path is where the value goes in the data: $ for the data itself,
	// $.products[0].name, $["a key"].
	Path string `yaml:"path" json:"path"`
	// Type is one of FieldTypes.
	Type string `yaml:"type" json:"type"`
	// CSS selects the element whose text holds the value (its first
	// number for number and integer fields).
	CSS string `yaml:"css,omitempty" json:"css,omitempty"`
	// Value is the value when it is not read from the page: a template
	// ({{ key }} for a parameter) of a string, or the literal of a
	// number or a boolean.
	Value *string `yaml:"value,omitempty" json:"value,omitempty"`
}

// Leaf is a value of extracted data with its place, as Leaves lists them.
type Leaf struct {
	Path  string
	Type  string
	Value any // string, float64, bool or nil
}

// Leaves lists the values of decoded JSON data (as encoding/json decodes
// into any, with or without UseNumber) in document order: objects by
// sorted key, lists by index. An empty list or object is a leaf of type
// array or object. A number is an integer when it is whole, except a
// json.Number written with a decimal point or an exponent (149.00), which
// is a number: whoever wrote it meant one. A number's Value is a float64
// either way.
func Leaves(data any) []Leaf {
	var out []Leaf
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 {
				out = append(out, Leaf{Path: path, Type: TypeObject})
				return
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(path+pathKey(k), x[k])
			}
		case []any:
			if len(x) == 0 {
				out = append(out, Leaf{Path: path, Type: TypeArray})
				return
			}
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		case string:
			out = append(out, Leaf{Path: path, Type: TypeString, Value: x})
		case float64:
			out = append(out, Leaf{Path: path, Type: numberType(x, false), Value: x})
		case json.Number:
			f, err := x.Float64()
			if err != nil {
				out = append(out, Leaf{Path: path, Type: TypeString, Value: x.String()})
				return
			}
			out = append(out, Leaf{Path: path, Type: numberType(f, strings.ContainsAny(x.String(), ".eE")), Value: f})
		case bool:
			out = append(out, Leaf{Path: path, Type: TypeBoolean, Value: x})
		case nil:
			out = append(out, Leaf{Path: path, Type: TypeNull})
		default:
			out = append(out, Leaf{Path: path, Type: TypeString, Value: fmt.Sprint(x)})
		}
	}
	walk("$", data)
	return out
}

// numberType is the field type of a number: integer when it is whole
// (and exactly representable) and was not written as a decimal.
func numberType(x float64, writtenAsDecimal bool) string {
	if !writtenAsDecimal && x == math.Trunc(x) && math.Abs(x) < 1<<53 {
		return TypeInteger
	}
	return TypeNumber
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func pathKey(k string) string {
	if plainKey.MatchString(k) {
		return "." + k
	}
	return "[" + strconv.Quote(k) + "]"
}

// PathPart is a step of a path: a key of an object, or an index of a list
// (Key "" and Index ≥ 0).
type PathPart struct {
	Key   string
	Index int
	IsKey bool
}

// ParsePath reads a path: $, then .key, ["key"] or [index] steps.
func ParsePath(p string) ([]PathPart, error) {
	if !strings.HasPrefix(p, "$") {
		return nil, fmt.Errorf("%w: %q does not start with $", errNotPath, p)
	}
	var parts []PathPart
	rest := p[1:]
	for rest != "" {
		switch {
		case rest[0] == '.':
			end := 1
			for end < len(rest) && rest[end] != '.' && rest[end] != '[' {
				end++
			}
			key := rest[1:end]
			if !plainKey.MatchString(key) {
				return nil, fmt.Errorf("%w: %q: %q after a dot is not a plain key (write [\"…\"] for others)", errNotPath, p, key)
			}
			parts = append(parts, PathPart{Key: key, IsKey: true})
			rest = rest[end:]
		case rest[0] == '[':
			end := strings.IndexByte(rest, ']')
			if strings.HasPrefix(rest, `["`) {
				// A quoted key may hold ']'; find the closing quote.
				q, err := strconv.QuotedPrefix(rest[1:])
				if err != nil || !strings.HasPrefix(rest[1+len(q):], "]") {
					return nil, fmt.Errorf("%w: %q: a quoted key is not closed", errNotPath, p)
				}
				key, _ := strconv.Unquote(q)
				parts = append(parts, PathPart{Key: key, IsKey: true})
				rest = rest[1+len(q)+1:]
				continue
			}
			if end < 0 {
				return nil, fmt.Errorf("%w: %q: [ is not closed", errNotPath, p)
			}
			n, err := strconv.Atoi(rest[1:end])
			if err != nil || n < 0 || n > 100000 {
				return nil, fmt.Errorf("%w: %q: %q is not an index", errNotPath, p, rest[1:end])
			}
			parts = append(parts, PathPart{Index: n})
			rest = rest[end+1:]
		default:
			return nil, fmt.Errorf("%w: %q: unexpected %q", errNotPath, p, rest[:1])
		}
	}
	return parts, nil
}

// Build makes the data of the fields: read(i) is the text the page shows
// at Fields[i].CSS (ok false when the place is gone), render renders a
// Value template. It fails, naming the field, when a place is gone or its
// text does not hold a value of the field's type.
func (e *Extract) Build(read func(i int) (string, bool), render func(string) (string, error)) (any, error) {
	var root any
	for i, f := range e.Fields {
		parts, err := ParsePath(f.Path)
		if err != nil {
			return nil, err
		}
		v, err := f.value(i, read, render)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Path, err)
		}
		root, err = put(root, parts, v)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Path, err)
		}
	}
	return root, nil
}

func (f *Field) value(i int, read func(int) (string, bool), render func(string) (string, error)) (any, error) {
	switch f.Type {
	case TypeNull:
		return nil, nil
	case TypeArray:
		return []any{}, nil
	case TypeObject:
		return map[string]any{}, nil
	}
	var text string
	if f.CSS != "" {
		t, ok := read(i)
		if !ok {
			return nil, fmt.Errorf("nothing on the page matches %s", f.CSS)
		}
		text = t
	} else if f.Value != nil {
		t, err := render(*f.Value)
		if err != nil {
			return nil, err
		}
		text = t
	}
	switch f.Type {
	case TypeString:
		return text, nil
	case TypeBoolean:
		b, err := strconv.ParseBool(strings.TrimSpace(text))
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", text)
		}
		return b, nil
	}
	n, ok := FirstNumber(text)
	if !ok {
		return nil, fmt.Errorf("the text %q holds no number", clip(text, 60))
	}
	if f.Type == TypeInteger && n != math.Trunc(n) {
		return nil, fmt.Errorf("%v in %q is not a whole number", n, clip(text, 60))
	}
	return n, nil
}

var numberRE = regexp.MustCompile(`[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[-+]?\.\d+`)

// FirstNumber is the first number in text: digits with an optional sign,
// thousands separated by commas, and a decimal point ("$1,299.00" is
// 1299, "Rated 4.5 out of 5" is 4.5).
func FirstNumber(text string) (float64, bool) {
	m := numberRE.FindString(text)
	if m == "" {
		return 0, false
	}
	n, err := strconv.ParseFloat(strings.ReplaceAll(m, ",", ""), 64)
	return n, err == nil
}

// DecimalWritten reports whether the first number in text is written with
// a decimal point ("$149.00", "1,299.50"): a value read from such a text
// is a number, not an integer, even when this one is whole.
func DecimalWritten(text string) bool {
	return strings.Contains(numberRE.FindString(text), ".")
}

// put sets v at parts below root, making the objects and lists on the way.
func put(root any, parts []PathPart, v any) (any, error) {
	if len(parts) == 0 {
		if root != nil {
			return nil, fmt.Errorf("two fields give the same value")
		}
		return v, nil
	}
	p := parts[0]
	if p.IsKey {
		m, ok := root.(map[string]any)
		if root == nil {
			m, ok = map[string]any{}, true
		}
		if !ok {
			return nil, fmt.Errorf("a key %q of something that is not an object", p.Key)
		}
		child, err := put(m[p.Key], parts[1:], v)
		if err != nil {
			return nil, err
		}
		m[p.Key] = child
		return m, nil
	}
	l, ok := root.([]any)
	if root == nil {
		l, ok = []any{}, true
	}
	if !ok {
		return nil, fmt.Errorf("an index %d of something that is not a list", p.Index)
	}
	for len(l) <= p.Index {
		l = append(l, nil)
	}
	child, err := put(l[p.Index], parts[1:], v)
	if err != nil {
		return nil, err
	}
	l[p.Index] = child
	return l, nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

var nthOfType = regexp.MustCompile(`:nth-of-type\((\d+)\)`)

// Probe is the place where one more item of a list would be read: when
// the page shows something there, the list grew since the recording, and
// the recorded fields would miss items.
type Probe struct {
	// List is the list's path ($.products).
	List string
	// CSS selects where the next item's field would be.
	CSS string
}

// Probes returns, for each list whose items' fields were read from the
// page, where one more item would be. A list's items differ in one
// :nth-of-type step of their selectors (li:nth-of-type(1), (2), ...);
// the probe takes the next one after the last item. Lists of one item,
// and lists whose selectors do not differ that way, give no probe: they
// are read as recorded.
func (e *Extract) Probes() []Probe {
	type item struct {
		index int
		css   string
	}
	// The fields of each list, by the rest of their path.
	lists := map[string]map[string][]item{}
	var order []string
	for _, f := range e.Fields {
		if f.CSS == "" {
			continue
		}
		parts, err := ParsePath(f.Path)
		if err != nil {
			continue
		}
		k := slices.IndexFunc(parts, func(p PathPart) bool { return !p.IsKey })
		if k < 0 {
			continue
		}
		n := parts[k].Index
		list, rest := formatPath(parts[:k]), formatPath(parts[k+1:])
		if lists[list] == nil {
			lists[list] = map[string][]item{}
			order = append(order, list)
		}
		lists[list][rest] = append(lists[list][rest], item{n, f.CSS})
	}
	var out []Probe
	for _, list := range order {
		rests := make([]string, 0, len(lists[list]))
		for r := range lists[list] {
			rests = append(rests, r)
		}
		sort.Strings(rests)
		for _, rest := range rests {
			items := lists[list][rest]
			if len(items) < 2 || items[0].index != 0 || items[1].index != 1 {
				continue
			}
			if p, ok := nextItem(items[0].css, items[1].css, items[len(items)-1].css, len(items)-1); ok {
				out = append(out, Probe{List: list, CSS: p})
				break // one probe per list is enough
			}
		}
	}
	return out
}

// nextItem builds the selector of the item after the last one, from the
// selectors of the first two items (which must differ in one :nth-of-type
// step and nowhere else) and of the last (at index last).
func nextItem(first, second, lastCSS string, last int) (string, bool) {
	a, b, l := nthOfType.FindAllStringSubmatchIndex(first, -1), nthOfType.FindAllStringSubmatchIndex(second, -1), nthOfType.FindAllStringSubmatchIndex(lastCSS, -1)
	if len(a) != len(b) || len(a) != len(l) || len(a) == 0 {
		return "", false
	}
	at, step := -1, 0
	for i := range a {
		na, _ := strconv.Atoi(first[a[i][2]:a[i][3]])
		nb, _ := strconv.Atoi(second[b[i][2]:b[i][3]])
		if na != nb {
			if at >= 0 || first[:a[i][2]] != second[:b[i][2]] {
				return "", false
			}
			at, step = i, nb-na
		}
	}
	if at < 0 || step <= 0 {
		return "", false
	}
	n, _ := strconv.Atoi(lastCSS[l[at][2]:l[at][3]])
	if n != mustAtoi(first[a[at][2]:a[at][3]])+step*last {
		return "", false
	}
	return lastCSS[:l[at][2]] + strconv.Itoa(n+step) + lastCSS[l[at][3]:], true
}

// formatPath writes path parts as a path ($ first).
func formatPath(parts []PathPart) string {
	var b strings.Builder
	b.WriteString("$")
	for _, p := range parts {
		if p.IsKey {
			b.WriteString(pathKey(p.Key))
		} else {
			fmt.Fprintf(&b, "[%d]", p.Index)
		}
	}
	return b.String()
}

func mustAtoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
