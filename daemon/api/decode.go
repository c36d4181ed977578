package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/abctl/abctl/client"
)

// readBody reads the whole request body within the size limit; a body
// over it is a KindTooLarge error (413) that names the limit.
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	b, err := readAll(r.Body, r.ContentLength)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, bodyTooLarge(tooLarge.Limit)
	}
	if err != nil {
		return nil, errorf(KindBadRequest, "Could not read the request body: %v", err)
	}
	return b, nil
}

// readAll reads rd to its end. A body whose length is known (n >= 0; at
// most maxBodyBytes, withBodyLimit refuses the others) is read into one
// buffer of its size, plus the byte that finds its end: io.ReadAll's
// growing buffer would pass through about twice the body's size on the
// way, which for a body of several MB is what the process's memory grows
// by.
func readAll(rd io.Reader, n int64) ([]byte, error) {
	if n < 0 || n > maxBodyBytes {
		return io.ReadAll(rd)
	}
	b := make([]byte, 0, n+1)
	for {
		m, err := rd.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			// Longer than it said: the rest the usual way.
			rest, err := io.ReadAll(rd)
			return append(b, rest...), err
		}
	}
}

// mediaType returns the request's media type, lowercased, without
// parameters ("" when absent or unreadable).
func mediaType(r *http.Request) string {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return strings.ToLower(mt)
}

func isJSONMediaType(mt string) bool {
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// decodeJSON decodes body into v and reports problems as the hosted service
// does: malformed JSON is a json_invalid entry at its byte offset, a value
// of the wrong type names the field. Nothing in a client's input yields a
// 500.
func decodeJSON(body []byte, v any, loc ...any) error {
	if len(body) == 0 {
		return invalid([]client.ValidationError{fieldError("missing", "Field required", nil, append([]any{"body"}, loc...)...)})
	}
	err := json.Unmarshal(body, v)
	if err == nil {
		return nil
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		e := fieldError("json_invalid", "JSON decode error", map[string]any{}, "body", syntax.Offset)
		e.Ctx, _ = json.Marshal(map[string]string{"error": syntax.Error()})
		return invalid([]client.ValidationError{e})
	case errors.As(err, &typ):
		path := append([]any{"body"}, loc...)
		if typ.Field != "" {
			for _, p := range strings.Split(typ.Field, ".") {
				path = append(path, p)
			}
		}
		return invalid([]client.ValidationError{fieldError(jsonTypeName(typ.Type.Kind().String()),
			fmt.Sprintf("Input should be a valid %s, not %s", typ.Type.String(), typ.Value), typ.Value, path...)})
	}
	return invalid([]client.ValidationError{fieldError("value_error", err.Error(), nil, append([]any{"body"}, loc...)...)})
}

func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "string_type"
	case "bool":
		return "bool_type"
	case "int", "int64", "int32":
		return "int_type"
	case "float64":
		return "float_type"
	case "slice":
		return "list_type"
	}
	return "model_attributes_type"
}

// decodeJSONBody reads a JSON request body into v, requiring a JSON media
// type: the hosted service parses a body only when it is declared JSON.
func decodeJSONBody(r *http.Request, v any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	if mt := mediaType(r); len(body) > 0 && !isJSONMediaType(mt) {
		return invalid([]client.ValidationError{fieldError("model_attributes_type",
			"Input should be a JSON object sent with Content-Type: application/json", nil, "body")})
	}
	return decodeJSON(body, v)
}

// queryReader reads query parameters and collects every problem, so that a
// request with several bad parameters hears about all of them at once.
type queryReader struct {
	q    url.Values
	errs []client.ValidationError
}

// newQueryReader reads r's query. A request without one reads from a nil
// url.Values, where every lookup is empty, rather than parsing nothing
// into a new map: most GETs of one resource have no query.
func newQueryReader(r *http.Request) *queryReader {
	if r.URL.RawQuery == "" {
		return &queryReader{}
	}
	return &queryReader{q: r.URL.Query()}
}

// lastValue is a scalar query parameter's value as the hosted service
// (FastAPI) reads it: the last of a repeated parameter
// (?page_size=100&page_size=1 is 1), "" when absent. List parameters
// (status, tags) keep every value.
func lastValue(q url.Values, name string) string {
	vs := q[name]
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1]
}

// queryValue is lastValue of the request's query.
func queryValue(r *http.Request, name string) string { return lastValue(r.URL.Query(), name) }

// int reads an integer parameter within [min, max] (max 0: no upper bound).
func (qr *queryReader) int(name string, def, min, max int) int {
	s := lastValue(qr.q, name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		qr.errs = append(qr.errs, fieldError("int_parsing", "Input should be a valid integer, unable to parse string as an integer", s, "query", name))
		return def
	}
	if n < min {
		e := fieldError("greater_than_equal", fmt.Sprintf("Input should be greater than or equal to %d", min), s, "query", name)
		e.Ctx, _ = json.Marshal(map[string]int{"ge": min})
		qr.errs = append(qr.errs, e)
		return def
	}
	if max > 0 && n > max {
		e := fieldError("less_than_equal", fmt.Sprintf("Input should be less than or equal to %d", max), s, "query", name)
		e.Ctx, _ = json.Marshal(map[string]int{"le": max})
		qr.errs = append(qr.errs, e)
		return def
	}
	return n
}

// paging reads the page (from 1) and page_size (from 1, defaultSize when
// absent) of a list; a max of 0 is no bound.
func (qr *queryReader) paging(defaultSize, maxPage, maxSize int) (page, size int) {
	return qr.int("page", 1, 1, maxPage), qr.int("page_size", defaultSize, 1, maxSize)
}

// bool reads a boolean parameter with the spellings the hosted service
// accepts (true/false, 1/0, yes/no, on/off, t/f, y/n).
func (qr *queryReader) bool(name string) bool {
	s := lastValue(qr.q, name)
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return false
	case "true", "1", "yes", "on", "t", "y":
		return true
	case "false", "0", "no", "off", "f", "n":
		return false
	}
	qr.errs = append(qr.errs, fieldError("bool_parsing", "Input should be a valid boolean, unable to interpret input", s, "query", name))
	return false
}

// time reads a date-time parameter, in RFC 3339 or the API's zone-less
// form (taken as UTC); nil when absent.
func (qr *queryReader) time(name string) *client.Time {
	s := strings.TrimSpace(lastValue(qr.q, name))
	if s == "" {
		return nil
	}
	t, err := client.ParseTime(s)
	if err != nil {
		qr.errs = append(qr.errs, fieldError("datetime_from_date_parsing", "Input should be a valid datetime or date, invalid character in year", s, "query", name))
		return nil
	}
	return &t
}

func (qr *queryReader) string(name string) string { return lastValue(qr.q, name) }

func (qr *queryReader) strings(name string) []string { return qr.q[name] }

func (qr *queryReader) err() error { return invalid(qr.errs) }

// The hosted service's 422 shapes, which every handler reports its
// problems in.

// fieldError is one entry of a 422 list: loc starts with "body", "query",
// "path" or "header"; typ and msg follow the hosted service's vocabulary
// (missing, int_parsing, greater_than_equal, ...).
func fieldError(typ, msg string, input any, loc ...any) client.ValidationError {
	v := client.ValidationError{Type: typ, Loc: loc, Msg: msg}
	if input != nil {
		v.Input, _ = json.Marshal(input)
	}
	return v
}

// invalid returns a 422 error for the given entries, or nil when there are
// none, so that validators can collect every problem and report them at once.
func invalid(entries []client.ValidationError) error {
	if len(entries) == 0 {
		return nil
	}
	return &Error{Kind: KindInvalid, Validation: entries}
}

// valueError is a 422 entry for a rule a field breaks, worded as the
// hosted service's validators word theirs.
func valueError(msg string, input any, loc ...any) client.ValidationError {
	return fieldError("value_error", "Value error, "+msg, input, loc...)
}

func missingField(loc ...any) client.ValidationError {
	return fieldError("missing", "Field required", nil, loc...)
}

func tooLong(n int, max int, input any, loc ...any) client.ValidationError {
	return fieldError("too_long", fmt.Sprintf("List should have at most %d items after validation, not %d", max, n), input, loc...)
}
