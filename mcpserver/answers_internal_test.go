package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

func TestListPage(t *testing.T) {
	p := pager{items: "things", defaultSize: 10, maxSize: 100}
	// fetch serves n items, whatever the page, and records what it was asked.
	fetch := func(n int, asked *[2]int) func(ctx context.Context, page, size int) ([]int, error) {
		return func(_ context.Context, page, size int) ([]int, error) {
			*asked = [2]int{page, size}
			items := make([]int, n)
			for i := range items {
				items[i] = i
			}
			return items, nil
		}
	}
	for _, tc := range []struct {
		name      string
		args      PageArgs
		served    int
		wantAsked [2]int
		wantInfo  PageInfo
	}{
		{"defaults", PageArgs{}, 3, [2]int{1, 10}, PageInfo{Page: 1, PageSize: 10}},
		{"a full page may have more", PageArgs{Page: 2, PageSize: 3}, 3, [2]int{2, 3}, PageInfo{Page: 2, PageSize: 3, HasMore: true}},
		{"a short page is the last", PageArgs{Page: 4, PageSize: 3}, 2, [2]int{4, 3}, PageInfo{Page: 4, PageSize: 3}},
		{"page 0 and negative sizes mean the defaults", PageArgs{Page: 0, PageSize: -5}, 10, [2]int{1, 10}, PageInfo{Page: 1, PageSize: 10, HasMore: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked [2]int
			items, info, err := listPage(t.Context(), p, tc.args, fetch(tc.served, &asked), strconv.Itoa)
			if err != nil {
				t.Fatal(err)
			}
			if asked != tc.wantAsked || info != tc.wantInfo || len(items) != tc.served {
				t.Errorf("asked %v, answered %v with %d items; want asked %v, answered %v with %d", asked, info, len(items), tc.wantAsked, tc.wantInfo, tc.served)
			}
			if tc.served > 0 && items[tc.served-1] != strconv.Itoa(tc.served-1) {
				t.Errorf("items %q were not shaped in order", items)
			}
		})
	}

	failure := errors.New("the service is down")
	_, _, err := listPage(t.Context(), p, PageArgs{}, func(context.Context, int, int) ([]int, error) { return nil, failure }, strconv.Itoa)
	if !errors.Is(err, failure) {
		t.Errorf("listPage returned %v, want the fetch's error", err)
	}
}

func TestShapeAllIsNeverNil(t *testing.T) {
	b, err := json.Marshal(shapeAll([]int(nil), strconv.Itoa))
	if err != nil || string(b) != "[]" {
		t.Errorf("shapeAll of nothing encodes as %s (%v), want []", b, err)
	}
}

func TestPagerRefines(t *testing.T) {
	props := func() map[string]*jsonschema.Schema {
		return map[string]*jsonschema.Schema{"page": {}, "page_size": {}, "has_more": {}}
	}
	p := props()
	pager{items: "folders", defaultSize: 50, maxSize: 500}.refineArgs(p)
	if *p["page"].Minimum != 1 || p["page"].Maximum != nil || string(p["page"].Default) != "1" ||
		*p["page_size"].Minimum != 1 || *p["page_size"].Maximum != 500 || string(p["page_size"].Default) != "50" ||
		p["page_size"].Description != "folders per page" {
		t.Errorf("refineArgs: page %+v, page_size %+v", p["page"], p["page_size"])
	}
	pager{items: "folders"}.refineAnswer(p)
	if d := p["has_more"].Description; d != "true when the next page may hold more folders" {
		t.Errorf("refineAnswer: has_more described %q", d)
	}

	// Without a default size, the service's own page size applies: no
	// defaults are claimed.
	p = props()
	pager{items: "scripts", maxSize: 100}.refineArgs(p)
	if p["page"].Default != nil || p["page_size"].Default != nil || *p["page_size"].Maximum != 100 {
		t.Errorf("refineArgs without a default size: page %+v, page_size %+v", p["page"], p["page_size"])
	}
}

func TestAnswerWithAndDeleted(t *testing.T) {
	answer := answerWith(strconv.Itoa)
	if out, err := answer(7, nil); err != nil || *out != "7" {
		t.Errorf("answerWith(7, nil) = %v, %v; want 7", out, err)
	}
	failure := errors.New("not found")
	if out, err := answer(7, failure); out != nil || !errors.Is(err, failure) {
		t.Errorf("answerWith(7, err) = %v, %v; want nil and the error", out, err)
	}

	report := &DeleteResult{ID: "x", Deleted: true}
	if out, err := deleted(nil, report); out != report || err != nil {
		t.Errorf("deleted(nil, report) = %v, %v; want the report", out, err)
	}
	if out, err := deleted(failure, report); out != nil || !errors.Is(err, failure) {
		t.Errorf("deleted(err, report) = %v, %v; want nil and the error", out, err)
	}
}
