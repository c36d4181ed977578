package tmpl

// Expressions, for the criteria of conditional blocks: the part of Jinja2
// that branch conditions use, evaluated without a model.
//
//	{{ Extract_Email_output.email }}                 a value, taken for its truth
//	{{ total > 100 and currency == "EUR" }}
//	{{ not (status in ["failed", "canceled"]) }}
//	{{ items | length >= 3 }}
//
// Literals: numbers, strings in single or double quotes, true/false/none
// (also True/False/None), lists [a, b]. Operators, loosest first: or; and;
// not; == != < <= > >= in, not in; + -; * / %; unary -. Filters after a
// value: length (count), lower, upper, trim, int, float, string, default(x).
// A name that is not defined is none, as Jinja's undefined is (a missing
// output is falsy, not an error); a field of none is none too. Truth is
// Python's: none, false, 0, "", [] and {} are false.

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Truth evaluates a condition written as a template: the single
// {{ expression }} it holds, taken for its truth; or, for a template with
// text around its references, the rendered text, true unless it is empty
// or reads false, 0 or none.
func Truth(condition string, vars map[string]any) (bool, error) {
	c := strings.TrimSpace(condition)
	if inner, ok := strings.CutPrefix(c, "{{"); ok {
		if inner, ok = strings.CutSuffix(inner, "}}"); ok && !strings.Contains(inner, "{{") {
			v, err := Eval(inner, vars)
			if err != nil {
				return false, err
			}
			return truthy(v), nil
		}
	}
	text, err := Render(c, vars)
	if err != nil {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(text)) {
	case "", "false", "0", "none", "null":
		return false, nil
	}
	return true, nil
}

// Eval evaluates one expression.
func Eval(expr string, vars map[string]any) (any, error) {
	p := &parser{src: expr, vars: vars}
	p.next()
	v, err := p.or()
	if err != nil {
		return nil, &Error{Ref: "{{" + expr + "}}", Msg: err.Error()}
	}
	if p.tok.kind != tEOF {
		return nil, &Error{Ref: "{{" + expr + "}}", Msg: fmt.Sprintf("unexpected %q at %d", p.tok.text, p.tok.pos+1)}
	}
	return v, nil
}

type tokKind int

const (
	tEOF tokKind = iota
	tNum
	tStr
	tName
	tOp
)

type token struct {
	kind tokKind
	text string
	num  float64
	pos  int
}

type parser struct {
	src  string
	pos  int
	tok  token
	vars map[string]any
	err  error
}

func (p *parser) next() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t' || p.src[p.pos] == '\n') {
		p.pos++
	}
	start := p.pos
	if p.pos >= len(p.src) {
		p.tok = token{kind: tEOF, pos: start}
		return
	}
	c := p.src[p.pos]
	switch {
	case c >= '0' && c <= '9':
		for p.pos < len(p.src) && (p.src[p.pos] >= '0' && p.src[p.pos] <= '9' || p.src[p.pos] == '.') {
			p.pos++
		}
		n, err := strconv.ParseFloat(p.src[start:p.pos], 64)
		if err != nil && p.err == nil {
			p.err = fmt.Errorf("%q is not a number", p.src[start:p.pos])
		}
		p.tok = token{kind: tNum, text: p.src[start:p.pos], num: n, pos: start}
	case c == '"' || c == '\'':
		p.pos++
		var b strings.Builder
		for p.pos < len(p.src) && p.src[p.pos] != c {
			if p.src[p.pos] == '\\' && p.pos+1 < len(p.src) {
				p.pos++
			}
			b.WriteByte(p.src[p.pos])
			p.pos++
		}
		if p.pos >= len(p.src) {
			if p.err == nil {
				p.err = fmt.Errorf("the string that starts at %d is not closed", start+1)
			}
		} else {
			p.pos++
		}
		p.tok = token{kind: tStr, text: b.String(), pos: start}
	case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		for p.pos < len(p.src) && (p.src[p.pos] == '_' || p.src[p.pos] >= 'a' && p.src[p.pos] <= 'z' ||
			p.src[p.pos] >= 'A' && p.src[p.pos] <= 'Z' || p.src[p.pos] >= '0' && p.src[p.pos] <= '9') {
			p.pos++
		}
		p.tok = token{kind: tName, text: p.src[start:p.pos], pos: start}
	default:
		for _, op := range []string{"==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "%", "(", ")", "[", "]", ".", ",", "|"} {
			if strings.HasPrefix(p.src[p.pos:], op) {
				p.pos += len(op)
				p.tok = token{kind: tOp, text: op, pos: start}
				return
			}
		}
		if p.err == nil {
			p.err = fmt.Errorf("unexpected %q at %d", string(c), start+1)
		}
		p.pos = len(p.src)
		p.tok = token{kind: tEOF, pos: start}
	}
}

func (p *parser) is(kind tokKind, text string) bool { return p.tok.kind == kind && p.tok.text == text }

func (p *parser) expect(op string) error {
	if !p.is(tOp, op) {
		return fmt.Errorf("expected %q at %d", op, p.tok.pos+1)
	}
	p.next()
	return nil
}

func (p *parser) or() (any, error) {
	l, err := p.and()
	for err == nil && p.is(tName, "or") {
		p.next()
		var r any
		if r, err = p.and(); err == nil {
			l = truthy(l) || truthy(r)
		}
	}
	return l, p.fail(err)
}

func (p *parser) and() (any, error) {
	l, err := p.not()
	for err == nil && p.is(tName, "and") {
		p.next()
		var r any
		if r, err = p.not(); err == nil {
			l = truthy(l) && truthy(r)
		}
	}
	return l, err
}

func (p *parser) not() (any, error) {
	if p.is(tName, "not") {
		p.next()
		v, err := p.not()
		return !truthy(v), err
	}
	return p.compare()
}

func (p *parser) compare() (any, error) {
	l, err := p.sum()
	for err == nil {
		op := ""
		switch {
		case p.tok.kind == tOp && (p.tok.text == "==" || p.tok.text == "!=" || p.tok.text == "<" || p.tok.text == "<=" || p.tok.text == ">" || p.tok.text == ">="):
			op = p.tok.text
			p.next()
		case p.is(tName, "in"):
			op = "in"
			p.next()
		case p.is(tName, "not"):
			p.next()
			if !p.is(tName, "in") {
				return nil, fmt.Errorf("expected \"in\" after \"not\" at %d", p.tok.pos+1)
			}
			op = "not in"
			p.next()
		default:
			return l, nil
		}
		var r any
		if r, err = p.sum(); err == nil {
			l, err = compare(op, l, r)
		}
	}
	return l, err
}

func (p *parser) sum() (any, error) {
	l, err := p.product()
	for err == nil && (p.is(tOp, "+") || p.is(tOp, "-")) {
		op := p.tok.text
		p.next()
		var r any
		if r, err = p.product(); err == nil {
			if op == "+" {
				if ls, ok := l.(string); ok {
					l = ls + text(r)
					continue
				}
			}
			l, err = arith(op, l, r)
		}
	}
	return l, err
}

func (p *parser) product() (any, error) {
	l, err := p.unary()
	for err == nil && (p.is(tOp, "*") || p.is(tOp, "/") || p.is(tOp, "%")) {
		op := p.tok.text
		p.next()
		var r any
		if r, err = p.unary(); err == nil {
			l, err = arith(op, l, r)
		}
	}
	return l, err
}

func (p *parser) unary() (any, error) {
	if p.is(tOp, "-") {
		p.next()
		v, err := p.unary()
		if err != nil {
			return nil, err
		}
		return arith("-", 0.0, v)
	}
	v, err := p.primary()
	for err == nil && p.is(tOp, "|") {
		p.next()
		v, err = p.filter(v)
	}
	return v, err
}

func (p *parser) primary() (any, error) {
	if p.err != nil {
		return nil, p.err
	}
	t := p.tok
	switch {
	case t.kind == tNum:
		p.next()
		return t.num, nil
	case t.kind == tStr:
		p.next()
		return t.text, nil
	case p.is(tOp, "("):
		p.next()
		v, err := p.or()
		if err != nil {
			return nil, err
		}
		return v, p.expect(")")
	case p.is(tOp, "["):
		p.next()
		list := []any{}
		for !p.is(tOp, "]") {
			v, err := p.or()
			if err != nil {
				return nil, err
			}
			list = append(list, v)
			if !p.is(tOp, ",") {
				break
			}
			p.next()
		}
		return list, p.expect("]")
	case t.kind == tName:
		p.next()
		switch t.text {
		case "true", "True":
			return true, nil
		case "false", "False":
			return false, nil
		case "none", "None", "null":
			return nil, nil
		}
		return p.path(t.text)
	}
	if t.kind == tEOF {
		return nil, fmt.Errorf("the expression ends where a value was expected")
	}
	return nil, fmt.Errorf("unexpected %q at %d", t.text, t.pos+1)
}

// path reads the .field and [index] steps after a name and looks the value
// up; what is not there is none.
func (p *parser) path(name string) (any, error) {
	v, defined := p.vars[name]
	if !defined {
		v = nil
	}
	for {
		switch {
		case p.is(tOp, "."):
			p.next()
			if p.tok.kind != tName && p.tok.kind != tNum {
				return nil, fmt.Errorf("expected a field name after \".\" at %d", p.tok.pos+1)
			}
			v = member(v, p.tok.text)
			p.next()
		case p.is(tOp, "["):
			p.next()
			key, err := p.or()
			if err != nil {
				return nil, err
			}
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			v = member(v, key)
		default:
			return v, nil
		}
	}
}

func member(v any, key any) any {
	if raw, ok := v.(json.RawMessage); ok {
		if json.Unmarshal(raw, &v) != nil {
			return nil
		}
	}
	switch x := v.(type) {
	case map[string]any:
		return x[text(key)]
	case []any:
		f, ok := number(key)
		if !ok {
			if i, err := strconv.Atoi(text(key)); err == nil {
				f, ok = float64(i), true
			}
		}
		if !ok || f != math.Trunc(f) {
			return nil
		}
		i := int(f)
		if i < 0 {
			i += len(x)
		}
		if i < 0 || i >= len(x) {
			return nil
		}
		return x[i]
	}
	return nil
}

func (p *parser) filter(v any) (any, error) {
	if p.tok.kind != tName {
		return nil, fmt.Errorf("expected a filter name after \"|\" at %d", p.tok.pos+1)
	}
	name := p.tok.text
	p.next()
	switch name {
	case "length", "count":
		switch x := v.(type) {
		case string:
			return float64(len([]rune(x))), nil
		case []any:
			return float64(len(x)), nil
		case map[string]any:
			return float64(len(x)), nil
		case nil:
			return 0.0, nil
		}
		return nil, fmt.Errorf("%s has no length", kind(v))
	case "lower":
		return strings.ToLower(text(v)), nil
	case "upper":
		return strings.ToUpper(text(v)), nil
	case "trim":
		return strings.TrimSpace(text(v)), nil
	case "string":
		return text(v), nil
	case "int", "float":
		f, ok := number(v)
		if !ok {
			var err error
			if f, err = strconv.ParseFloat(strings.TrimSpace(text(v)), 64); err != nil {
				f = 0
			}
		}
		if name == "int" {
			f = math.Trunc(f)
		}
		return f, nil
	case "default", "d":
		if err := p.expect("("); err != nil {
			return nil, err
		}
		def, err := p.or()
		if err != nil {
			return nil, err
		}
		if err := p.expect(")"); err != nil {
			return nil, err
		}
		if v == nil {
			return def, nil
		}
		return v, nil
	}
	return nil, fmt.Errorf("unknown filter %q (known: length, lower, upper, trim, int, float, string, default)", name)
}

func (p *parser) fail(err error) error {
	if err == nil && p.err != nil {
		return p.err
	}
	return err
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

func arith(op string, l, r any) (any, error) {
	a, ok1 := number(l)
	b, ok2 := number(r)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%s %s %s: both sides must be numbers", kind(l), op, kind(r))
	}
	switch op {
	case "+":
		return a + b, nil
	case "-":
		return a - b, nil
	case "*":
		return a * b, nil
	case "/":
		if b == 0 {
			return nil, fmt.Errorf("division by zero")
		}
		return a / b, nil
	}
	if b == 0 {
		return nil, fmt.Errorf("modulo by zero")
	}
	return math.Mod(a, b), nil
}

func compare(op string, l, r any) (any, error) {
	switch op {
	case "in", "not in":
		found := false
		switch c := r.(type) {
		case string:
			found = strings.Contains(c, text(l))
		case []any:
			for _, x := range c {
				found = found || equal(l, x)
			}
		case map[string]any:
			_, found = c[text(l)]
		case nil:
		default:
			return nil, fmt.Errorf("\"in\" needs a list, an object or a text on its right, not %s", kind(r))
		}
		return found == (op == "in"), nil
	case "==":
		return equal(l, r), nil
	case "!=":
		return !equal(l, r), nil
	}
	if a, ok := number(l); ok {
		if b, ok := number(r); ok {
			return order(op, cmpFloat(a, b)), nil
		}
	}
	ls, ok1 := l.(string)
	rs, ok2 := r.(string)
	if ok1 && ok2 {
		return order(op, strings.Compare(ls, rs)), nil
	}
	return nil, fmt.Errorf("%s %s %s: only numbers, or texts, can be ordered", kind(l), op, kind(r))
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func order(op string, c int) bool {
	switch op {
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}

func equal(a, b any) bool {
	if x, ok := number(a); ok {
		if y, ok := number(b); ok {
			return x == y
		}
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// truthy is Python's truth of a value.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	case json.RawMessage:
		var y any
		if json.Unmarshal(x, &y) != nil {
			return len(x) > 0
		}
		return truthy(y)
	}
	if f, ok := number(v); ok {
		return f != 0
	}
	return true
}
