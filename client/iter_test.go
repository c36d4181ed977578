package client_test

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
)

// folderPages serves GET /v1/folders from a list of total folders, honouring
// page and page_size like the service does.
func folderPages(ts *testServer, total int, failOnPage int) {
	ts.mux.HandleFunc("GET /v1/folders", func(w http.ResponseWriter, r *http.Request) {
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		size, _ := strconv.Atoi(r.URL.Query().Get("page_size"))
		if page == failOnPage {
			w.WriteHeader(503)
			w.Write([]byte(`{"detail":"down"}`))
			return
		}
		var items []string
		for i := (page - 1) * size; i < min(page*size, total); i++ {
			items = append(items, fmt.Sprintf(`{"title":"f%d","description":null,"folder_id":"fld_%d","organization_id":"o_1","workflow_count":0,"created_at":"2026-01-31T15:20:42","modified_at":"2026-01-31T15:20:42"}`, i, i))
		}
		w.Write([]byte("[" + strings.Join(items, ",") + "]"))
	})
}

func TestAllWalksPagesAndStopsOnShortPage(t *testing.T) {
	ts := newTestServer(t)
	folderPages(ts, 5, 0)
	opts := &client.ListFoldersOptions{PageSize: 2, Search: "f"}
	var ids []string
	for f, err := range ts.client.Folders.All(t.Context(), opts) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, f.FolderID)
	}
	if strings.Join(ids, ",") != "fld_0,fld_1,fld_2,fld_3,fld_4" {
		t.Errorf("ids %v", ids)
	}
	reqs := ts.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 (pages of 2, 2 and 1)", len(reqs))
	}
	for i, r := range reqs {
		if r.Query["page"][0] != strconv.Itoa(i+1) || r.Query["page_size"][0] != "2" || r.Query["search"][0] != "f" {
			t.Errorf("request %d query %v", i, r.Query)
		}
	}
	if opts.Page != 0 || opts.PageSize != 2 {
		t.Errorf("the caller's options were modified: %+v", opts)
	}
}

func TestAllExactMultipleEndsOnEmptyPage(t *testing.T) {
	ts := newTestServer(t)
	folderPages(ts, 4, 0)
	n := 0
	for _, err := range ts.client.Folders.All(t.Context(), &client.ListFoldersOptions{PageSize: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 4 || len(ts.requests()) != 3 {
		t.Errorf("%d folders in %d requests, want 4 in 3", n, len(ts.requests()))
	}
}

func TestAllDefaultsPageSizeAndStopsOnBreak(t *testing.T) {
	ts := newTestServer(t)
	folderPages(ts, 250, 0)
	n := 0
	for _, err := range ts.client.Folders.All(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 150 {
			break
		}
	}
	reqs := ts.requests()
	if len(reqs) != 2 || reqs[0].Query["page_size"][0] != "100" {
		t.Errorf("%d requests (first query %v), want 2 pages of 100", len(reqs), reqs[0].Query)
	}
}

func TestAllYieldsErrorOnceAndStops(t *testing.T) {
	ts := newTestServer(t, client.WithMaxRetries(0))
	folderPages(ts, 10, 2)
	var got, errs int
	for f, err := range ts.client.Folders.All(t.Context(), &client.ListFoldersOptions{PageSize: 3}) {
		if err != nil {
			errs++
			if !errors.Is(err, client.ErrServer) || f != nil {
				t.Errorf("error %v with folder %v", err, f)
			}
			continue
		}
		got++
	}
	if got != 3 || errs != 1 {
		t.Errorf("%d folders and %d errors, want 3 and 1", got, errs)
	}
}

func TestAgentsAllPages(t *testing.T) {
	ts := newTestServer(t)
	agent := fixture(t, "agent_response.json")
	ts.mux.HandleFunc("GET /v1/agents", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "1" {
			w.Write([]byte("[" + agent + "," + agent + "]"))
			return
		}
		w.Write([]byte("[" + agent + "]"))
	})
	n := 0
	for a, err := range ts.client.Agents.All(t.Context(), &client.ListAgentsOptions{PageSize: 2, SearchKey: "x"}) {
		if err != nil {
			t.Fatal(err)
		}
		if a.WorkflowPermanentID == "" {
			t.Error("agent without id")
		}
		n++
	}
	if n != 3 || len(ts.requests()) != 2 || ts.requests()[1].Query["search_key"][0] != "x" {
		t.Errorf("%d agents in %d requests", n, len(ts.requests()))
	}
}
