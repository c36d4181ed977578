package script

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

const sample = `format: abctl.script/v1
agent: wpid_1
cache_key: default
blocks:
  - label: search
    mode: replay
    steps:
      - action: input_text
        element: '[e3] input:search "Search products"'
        locators:
          - {by: testid, value: search-box}
          - {by: name, value: q, tag: input}
          - {by: role, role: searchbox, value: Search products}
          - {by: css, value: "form > input"}
        value: "{{ query }}"
        before: {url: /shop/search.html, title: Search}
        after: {url: /shop/search.html}
      - action: press_key
        value: Enter
        after: {url: /shop/results.html, title: "Results for {{ query }}"}
  - label: extract_results
    mode: replay
    extract:
      fields:
        - {path: $.query, type: string, value: "{{ query }}"}
        - {path: "$.products[0].name", type: string, css: "li:nth-of-type(1) > h3"}
        - {path: "$.products[0].price", type: number, css: "li:nth-of-type(1) > .price"}
        - {path: "$.products[0].rating", type: "null"}
  - label: judge
    mode: model
    reason: the block is a validation the model judges
`

func TestParseAndMarshalRoundTrip(t *testing.T) {
	s, err := Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Blocks) != 3 || s.Blocks[0].Steps[0].Locators[2].Role != "searchbox" || s.Blocks[1].Extract.Fields[1].CSS == "" {
		t.Fatalf("parsed %+v", s)
	}
	out := s.Marshal()
	again, err := Parse(out)
	if err != nil {
		t.Fatalf("the marshalled script does not parse: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(s, again) {
		t.Fatalf("round trip changed the script:\n%s", out)
	}
	if string(again.Marshal()) != string(out) {
		t.Fatal("Marshal is not stable")
	}
	sum := s.Summary()
	if sum[0].Mode != ModeReplay || sum[0].Steps != 2 || sum[1].Fields != 4 || sum[2].Mode != ModeModel || sum[2].Reason == "" {
		t.Fatalf("summary %+v", sum)
	}
}

func TestParseErrorsNameThePlace(t *testing.T) {
	for _, c := range []struct{ edit, want string }{
		{"action: press_key", "blocks[0] (search).steps[1].action: \"press_any\" cannot be replayed"},
		{"{by: name, value: q, tag: input}", "blocks[0] (search).steps[0].locators[1].by: \"nome\" is not a kind of locator"},
		{"mode: model", "blocks[2] (judge).mode: \"magic\" is not a mode"},
		{"type: number", "blocks[1] (extract_results).extract.fields[2].type: \"money\" is not a field type"},
		{"before: {url: /shop/search.html", "blocks[0] (search).steps[0].before.url: \"shop/search.html\" is not a path"},
		{"cache_key: default", "line 3: key colour not found"},
	} {
		bad := strings.Replace(sample, c.edit, map[string]string{
			"action: press_key":                "action: press_any",
			"{by: name, value: q, tag: input}": "{by: nome, value: q, tag: input}",
			"mode: model":                      "mode: magic",
			"type: number":                     "type: money",
			"before: {url: /shop/search.html":  "before: {url: shop/search.html",
			"cache_key: default":               "colour: blue",
		}[c.edit], 1)
		_, err := Parse([]byte(bad))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("edit %q: error %v, want it to contain %q", c.edit, err, c.want)
		}
	}
	if _, err := Parse([]byte("format: skyvern\n")); !errors.Is(err, ErrForeign) {
		t.Errorf("another format: %v", err)
	}
	if _, err := Parse([]byte("import os\nprint(os.environ)\n")); !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), "not a YAML mapping") || strings.Contains(err.Error(), "struct") {
		t.Errorf("a Python file: %v", err)
	}
}

func TestParseFilesRefusesForeignScripts(t *testing.T) {
	_, err := ParseFiles([]File{{Path: "main.py", Content: []byte("print('hi')")}})
	if !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), "main.py is a Python script") {
		t.Fatalf("python: %v", err)
	}
	_, err = ParseFiles([]File{{Path: "notes.txt", Content: []byte("x")}})
	if !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), "no script.yaml among the files (notes.txt)") {
		t.Fatalf("other file: %v", err)
	}
	_, err = ParseFiles([]File{{Path: "script.yaml", Content: []byte(sample)}, {Path: "README.md"}})
	if err == nil || !strings.Contains(err.Error(), "remove the others (README.md)") {
		t.Fatalf("two files: %v", err)
	}
	s, err := ParseFiles([]File{{Path: "./script.yaml", Content: []byte(sample)}})
	if err != nil || s.Agent != "wpid_1" {
		t.Fatalf("one file: %v", err)
	}
}

func TestTemplatize(t *testing.T) {
	params := map[string]string{"query": "jacket", "city": "New York", "short": "en", "n": "3"}
	for in, want := range map[string]string{
		"jacket":                      "{{ query }}",
		"red jacket for New York":     "red {{ query }} for {{ city }}",
		"en":                          "{{ short }}",
		"open the menu":               "open the menu", // "en" is too short to replace inside a text
		"3":                           "{{ n }}",
		"<secret:login.password>":     "<secret:login.password>",
		"literal {{ braces }} jacket": `literal {{ "{{" }} braces }} {{ query }}`,
	} {
		if got := Templatize(in, params); got != want {
			t.Errorf("Templatize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLeavesAndBuild(t *testing.T) {
	var data any
	json.Unmarshal([]byte(`{"query":"jacket","products":[{"name":"Trail Jacket","price":89,"rating":4.5},{"name":"Rain Shell","price":1299.5,"rating":null}],"tags":[],"odd key":true}`), &data)
	leaves := Leaves(data)
	var paths []string
	for _, l := range leaves {
		paths = append(paths, l.Path+":"+l.Type)
	}
	want := `$["odd key"]:boolean $.products[0].name:string $.products[0].price:integer $.products[0].rating:number $.products[1].name:string $.products[1].price:number $.products[1].rating:null $.query:string $.tags:array`
	if strings.Join(paths, " ") != want {
		t.Fatalf("leaves\n got %s\nwant %s", strings.Join(paths, " "), want)
	}
	// The page shows the values as people read them.
	page := map[string]string{
		"a": "Trail Jacket", "b": "$89.00", "c": "Rated 4.5 out of 5", "d": "Rain Shell", "e": "$1,299.50",
	}
	css := map[string]string{"$.products[0].name": "a", "$.products[0].price": "b", "$.products[0].rating": "c", "$.products[1].name": "d", "$.products[1].price": "e"}
	var e Extract
	for _, l := range leaves {
		f := Field{Path: l.Path, Type: l.Type, CSS: css[l.Path]}
		switch {
		case f.CSS != "":
		case l.Path == "$.query":
			v := "{{ query }}"
			f.Value = &v
		case l.Type == TypeBoolean:
			v := "true"
			f.Value = &v
		}
		e.Fields = append(e.Fields, f)
	}
	if err := e.validate(); err != nil {
		t.Fatal(err)
	}
	got, err := e.Build(func(i int) (string, bool) { v, ok := page[e.Fields[i].CSS]; return v, ok },
		func(s string) (string, error) { return strings.ReplaceAll(s, "{{ query }}", "jacket"), nil })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, data) {
		gb, _ := json.Marshal(got)
		t.Fatalf("built %s", gb)
	}
	// A place that is gone fails, naming the field.
	delete(page, "e")
	_, err = e.Build(func(i int) (string, bool) { v, ok := page[e.Fields[i].CSS]; return v, ok }, func(s string) (string, error) { return s, nil })
	if err == nil || !strings.Contains(err.Error(), "field $.products[1].price: nothing on the page matches e") {
		t.Fatalf("missing place: %v", err)
	}
}

func TestLocatorSelectors(t *testing.T) {
	for _, c := range []struct {
		l    Locator
		want string
	}{
		{Locator{By: ByTestID, Value: "go"}, `[data-testid="go"]`},
		{Locator{By: ByTestID, Value: "go", Attr: "data-qa"}, `[data-qa="go"]`},
		{Locator{By: ByID, Value: `a"b`}, `[id="a\"b"]`},
		{Locator{By: ByName, Value: "q", Tag: "input"}, `input[name="q"]`},
		{Locator{By: ByText, Value: `Say "hi" it's`, Tag: "button"}, `xpath=//button[normalize-space(.)=concat("Say ", '"', "hi", '"', " it's")]`},
		{Locator{By: ByText, Value: "Go", Tag: "input"}, `xpath=//input[@value="Go"]`},
	} {
		got, ok := c.l.Selector()
		if !ok || got != c.want {
			t.Errorf("%v: %q, want %q", c.l, got, c.want)
		}
	}
	if _, ok := (Locator{By: ByRole, Role: "button", Value: "Go"}).Selector(); ok {
		t.Error("a role locator has no selector")
	}
}

func TestProbes(t *testing.T) {
	e := Extract{Fields: []Field{
		{Path: "$.products[0].name", Type: TypeString, CSS: "#results > li:nth-of-type(1) > h3"},
		{Path: "$.products[0].price", Type: TypeNumber, CSS: "#results > li:nth-of-type(1) > span"},
		{Path: "$.products[1].name", Type: TypeString, CSS: "#results > li:nth-of-type(2) > h3"},
		{Path: "$.products[1].price", Type: TypeNumber, CSS: "#results > li:nth-of-type(2) > span"},
		{Path: "$.products[2].name", Type: TypeString, CSS: "#results > li:nth-of-type(3) > h3"},
		{Path: "$.products[2].price", Type: TypeNumber, CSS: "#results > li:nth-of-type(3) > span"},
		{Path: "$.single[0]", Type: TypeString, CSS: "#one > p"},
		{Path: `$["odd [key"][0]`, Type: TypeString, CSS: "table > tr:nth-of-type(2) > td"},
		{Path: `$["odd [key"][1]`, Type: TypeString, CSS: "table > tr:nth-of-type(4) > td"},
	}}
	got := e.Probes()
	want := []Probe{{List: "$.products", CSS: "#results > li:nth-of-type(4) > h3"}, {List: `$["odd [key"]`, CSS: "table > tr:nth-of-type(6) > td"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("probes %+v, want %+v", got, want)
	}
}

// TestLeavesNumbersAsWritten: a number written with a decimal point is a
// number even when it is whole; the page's "$149.00" is a decimal.
func TestLeavesNumbersAsWritten(t *testing.T) {
	dec := json.NewDecoder(strings.NewReader(`{"a":149.00,"b":149,"c":1e3,"d":24.5}`))
	dec.UseNumber()
	var data any
	if err := dec.Decode(&data); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range Leaves(data) {
		if _, ok := l.Value.(float64); !ok {
			t.Errorf("%s: value %T, want float64", l.Path, l.Value)
		}
		got = append(got, l.Path+":"+l.Type)
	}
	if want := "$.a:number $.b:integer $.c:number $.d:number"; strings.Join(got, " ") != want {
		t.Errorf("leaves %s, want %s", strings.Join(got, " "), want)
	}
	for text, want := range map[string]bool{"$149.00": true, "1,299.50 EUR": true, "$149": false, "149. items": false, "no number": false, "Item 3 of 4.5": false} {
		if DecimalWritten(text) != want {
			t.Errorf("DecimalWritten(%q) = %v", text, !want)
		}
	}
}
