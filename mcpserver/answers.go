package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/abctl/abctl/client"
)

// What the tools of every resource do alike: page a list, shape what the
// client returned into the tools' output types, answer a get or a delete.
//
// The output types are what the tools return as structured content. They
// are flatter than the wire types: what a model needs to answer a person,
// plain JSON values for free-form data, and absent members rather than
// nulls. verbosity "full" adds the whole wire object where it exists.

// PageArgs are the arguments of a list tool that pages: which page, and
// how many items on it. The description of page_size, which names the
// items, is set by pager.refineArgs.
type PageArgs struct {
	Page     int `json:"page,omitempty" jsonschema:"page number, from 1"`
	PageSize int `json:"page_size,omitempty"`
}

// PageInfo ends the answer of a list tool that pages: the page given and
// whether there may be another. The description of has_more, which names
// the items, is set by pager.refineAnswer.
type PageInfo struct {
	Page     int  `json:"page"`
	PageSize int  `json:"page_size"`
	HasMore  bool `json:"has_more"`
}

// pager is how a list tool pages.
type pager struct {
	// items names what is listed ("agents"), for the descriptions of
	// page_size and has_more.
	items string
	// defaultSize is the page size when the caller gives none. Zero is for
	// a tool that sends page and page_size to the service as given, so
	// that the service's own defaults apply: the schema then claims no
	// defaults, and the tool does not use listPage.
	defaultSize int
	maxSize     int
}

// refineArgs bounds page and page_size in a tool's input schema, gives
// them their defaults and describes page_size.
func (p pager) refineArgs(props map[string]*jsonschema.Schema) {
	bounds(props["page"], 1, 0)
	bounds(props["page_size"], 1, float64(p.maxSize))
	if p.defaultSize > 0 {
		withDefault(props["page"], "1")
		withDefault(props["page_size"], strconv.Itoa(p.defaultSize))
	}
	props["page_size"].Description = p.items + " per page"
}

// refineAnswer describes has_more in a tool's output schema.
func (p pager) refineAnswer(props map[string]*jsonschema.Schema) {
	props["has_more"].Description = "true when the next page may hold more " + p.items
}

// listPage reads the page args ask for (the first one, of defaultSize items,
// when they do not say) with fetch, and shapes each item it returns. A
// full page may be followed by more: has_more says so.
func listPage[W, Item any](ctx context.Context, p pager, args PageArgs,
	fetch func(ctx context.Context, page, size int) ([]W, error), shape func(W) Item) ([]Item, PageInfo, error) {
	page, size := max(args.Page, 1), args.PageSize
	if size <= 0 {
		size = p.defaultSize
	}
	got, err := fetch(ctx, page, size)
	if err != nil {
		return nil, PageInfo{}, err
	}
	return shapeAll(got, shape), PageInfo{Page: page, PageSize: size, HasMore: len(got) >= size}, nil
}

// shapeAll shapes each item of a list. The answer is never nil, so that an
// empty list is [] in the output rather than null.
func shapeAll[W, Item any](items []W, shape func(W) Item) []Item {
	out := make([]Item, 0, len(items))
	for _, it := range items {
		out = append(out, shape(it))
	}
	return out
}

// answerWith returns what answers a tool from a client call's results:
// the call's error as it is, or what it returned, shaped. It is written
// around the call, whose two results it takes:
//
//	return answerWith(folderInfo)(t.folders.Get(ctx, in.FolderID))
func answerWith[W, Out any](shape func(W) Out) func(W, error) (*Out, error) {
	return func(w W, err error) (*Out, error) {
		if err != nil {
			return nil, err
		}
		out := shape(w)
		return &out, nil
	}
}

// deleted answers a delete tool: err, the result of the deletion, or else
// the report of it.
func deleted[Out any](err error, report *Out) (*Out, error) {
	if err != nil {
		return nil, err
	}
	return report, nil
}

// rawValue returns a JSON value as something encoding/json writes back
// unchanged, or nil for null and absent values (which then stay out of the
// output).
func rawValue(b json.RawMessage) any {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || bytes.Equal(b, []byte("null")) {
		return nil
	}
	return b
}

func timeText(t *client.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.String()
}
