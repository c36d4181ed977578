package agentfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// The loader reads files as yaml.Node trees (yaml.v3 reads JSON too, as a
// YAML flow document), which keep the line and column of every key and
// value; values are checked against the schema and written out as JSON by
// hand, so that nothing in the file is decoded before it is checked.

// syntaxError is a YAML or JSON syntax error and the line it is on.
type syntaxError struct {
	line int // 0 when even a search could not place it
	msg  string
}

var yamlErrorLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// decodeDocuments returns the documents of data, in order, and the syntax
// error that stopped the reading, if any (the documents before it are
// returned).
func decodeDocuments(data []byte) ([]*yaml.Node, *syntaxError) {
	var docs []*yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		doc := new(yaml.Node)
		err := dec.Decode(doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return docs, placeSyntaxError(data, err)
		}
		docs = append(docs, doc)
	}
}

// parserProblems are the messages of yaml.v3's parser (as opposed to its
// scanner). For these it prints a 0-based line: the line of the
// collection the problem is in, or of the problem.
var parserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"found duplicate %YAML directive":        true,
	"found duplicate %TAG directive":         true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// placeSyntaxError turns a yaml.v3 error into a message and a 1-based
// line. yaml.v3 prints no line for line 1, and none for the errors of
// aliases (an unknown anchor): their line is found as the shortest prefix
// of whole lines that fails with the same message. For the parser's
// problems it prints the line of the collection the problem is in, which
// can be far above it (a key indented wrong on line 7 of a mapping that
// starts on line 4): the problem's own line is the first line from there
// on whose prefix fails with the same message, and the message says where
// the collection starts.
func placeSyntaxError(data []byte, err error) *syntaxError {
	msg := err.Error()
	lines := bytes.SplitAfter(data, []byte("\n"))
	fails := func(n int, msg string) bool {
		dec := yaml.NewDecoder(bytes.NewReader(bytes.Join(lines[:n], nil)))
		for {
			var doc yaml.Node
			err := dec.Decode(&doc)
			if err == nil {
				continue
			}
			if errors.Is(err, io.EOF) {
				return false
			}
			got := strings.TrimPrefix(err.Error(), "yaml: ")
			if m := yamlErrorLine.FindStringSubmatch(err.Error()); m != nil {
				got = m[2]
			}
			return got == msg
		}
	}
	if m := yamlErrorLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if !parserProblems[m[2]] {
			return &syntaxError{line: line, msg: m[2]}
		}
		start := line + 1 // 0-based in yaml.v3's message
		for n := start; n <= len(lines); n++ {
			if fails(n, m[2]) {
				if n == start {
					break
				}
				return &syntaxError{line: n, msg: fmt.Sprintf("%s (in the collection that starts on line %d)", m[2], start)}
			}
		}
		return &syntaxError{line: start, msg: m[2]}
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	if !strings.Contains(msg, "anchor") {
		return &syntaxError{line: 1, msg: msg}
	}
	lo, hi := 1, len(lines)
	if !fails(hi, msg) {
		return &syntaxError{msg: msg}
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if fails(mid, msg) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return &syntaxError{line: lo, msg: msg}
}

// isEmptyDocument reports whether doc has no content: a file's leading or
// trailing "---", or a file with only comments.
func isEmptyDocument(doc *yaml.Node) bool {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return true
	}
	c := doc.Content[0]
	return c.Kind == yaml.ScalarNode && c.ShortTag() == "!!null" && c.Value == "" && c.Style == 0
}

// maxAliasHops bounds following an alias to an alias (yaml.v3 never makes
// such chains, but a bound costs nothing).
const maxAliasHops = 64

// unalias follows aliases to the node they stand for.
func unalias(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxAliasHops; i++ {
		n = n.Alias
	}
	return n
}

// describe names what a node is, for "must be X, not Y" messages.
func describe(n *yaml.Node) string {
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "null"
		case "!!bool":
			return "a boolean"
		case "!!int", "!!float":
			return "a number"
		}
		return "a string"
	}
	return "an alias"
}

// isNull reports whether n is null (or missing).
func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// isText reports whether a scalar reads as text: a string, or a value YAML
// would turn into a timestamp (the service keeps dates as strings).
func isText(n *yaml.Node) bool {
	if n == nil || n.Kind != yaml.ScalarNode {
		return false
	}
	switch n.ShortTag() {
	case "!!str", "!!timestamp", "!!binary":
		return true
	}
	return false
}

// scalarInt returns the value of an integer scalar (YAML spellings such as
// 0x1F and 1_000 included), or of a float scalar that is a whole number.
func scalarInt(n *yaml.Node) (int64, bool) {
	switch n.ShortTag() {
	case "!!int":
		if i, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
			return i, true
		}
		var i int64
		return i, n.Decode(&i) == nil
	case "!!float":
		f, ok := scalarFloat(n)
		if ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f), true
		}
	}
	return 0, false
}

// scalarFloat returns the value of a number scalar that JSON can hold.
func scalarFloat(n *yaml.Node) (float64, bool) {
	switch n.ShortTag() {
	case "!!int":
		i, ok := scalarInt(n)
		return float64(i), ok
	case "!!float":
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil && n.Decode(&f) != nil {
			return 0, false
		}
		return f, !math.IsInf(f, 0) && !math.IsNaN(f)
	}
	return 0, false
}

// appendNumber writes a number scalar as JSON: as written when that is
// already a JSON number, else its value.
func appendNumber(buf *bytes.Buffer, n *yaml.Node) bool {
	if isJSONNumber(n.Value) {
		buf.WriteString(n.Value)
		return true
	}
	if n.ShortTag() == "!!int" {
		if i, ok := scalarInt(n); ok {
			buf.WriteString(strconv.FormatInt(i, 10))
			return true
		}
	}
	f, ok := scalarFloat(n)
	if !ok {
		return false
	}
	buf.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	return true
}

// isJSONNumber reports whether s is a number in JSON's grammar: valid
// JSON that begins as only a number can and ends in a digit (json.Valid
// alone would take white space around it).
func isJSONNumber(s string) bool {
	return s != "" && (s[0] == '-' || isDigit(s[0])) && isDigit(s[len(s)-1]) && json.Valid([]byte(s))
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// appendJSONString writes s as a JSON string. Invalid UTF-8 becomes
// U+FFFD, as encoding/json does.
func appendJSONString(buf *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	buf.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				buf.WriteByte('\\')
				buf.WriteByte(c)
			case c == '\n':
				buf.WriteString(`\n`)
			case c == '\r':
				buf.WriteString(`\r`)
			case c == '\t':
				buf.WriteString(`\t`)
			case c < 0x20:
				buf.WriteString(`\u00`)
				buf.WriteByte(hex[c>>4])
				buf.WriteByte(hex[c&0xf])
			default:
				buf.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf.WriteString(`\ufffd`)
		} else {
			buf.WriteString(s[i : i+size])
		}
		i += size
	}
	buf.WriteByte('"')
}
