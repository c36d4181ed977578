package examples

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/abctl/abctl/client"
)

// testOrderTriage: the model-free flow example reads the site's CSV
// report, loops over its rows and routes each by its total: large orders
// open the product's search results, small ones the catalog, and every
// order's page is saved as a PDF named after it.
func testOrderTriage(t *testing.T, e *exampleEnv, file string, cmds []string) {
	threshold, err := strconv.ParseFloat(params(t, cmds[0])["threshold"], 64)
	if err != nil {
		t.Fatalf("the command gives no numeric threshold: %s", cmds[0])
	}
	raw, err := os.ReadFile(filepath.Join(siteDir, "files", "report.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil || len(rows) < 3 {
		t.Fatalf("the site's report: %d rows, %v", len(rows), err)
	}
	orders := rows[1:]
	before := len(e.model.Calls())
	res, r := e.abctlRun(t, cmds[0])
	if res.code != 0 || r.Status != client.RunStatusCompleted {
		t.Fatalf("run %s: %s\n%s", r.Status, r.GetFailureReason(), res)
	}
	if n := len(e.model.Calls()) - before; n != 0 {
		t.Errorf("the model-free example called the model %d times", n)
	}
	var out struct {
		Read []map[string]string `json:"read_orders_output"`
		Each []struct {
			Check struct {
				Next string `json:"next_block_label"`
			} `json:"check_total_output"`
			Product *struct{ URL string } `json:"open_product_output"`
			Catalog *struct{ URL string } `json:"open_catalog_output"`
			Save    *struct {
				Files []struct{ Filename string } `json:"downloaded_files"`
			} `json:"save_page_output"`
		} `json:"each_order_output"`
	}
	if err := r.DecodeOutput(&out); err != nil {
		t.Fatal(err)
	}
	if len(out.Read) != len(orders) || len(out.Each) != len(orders) {
		t.Fatalf("%d rows read and %d iterations for %d orders: %s", len(out.Read), len(out.Each), len(orders), r.Output)
	}
	large := 0
	for i, row := range orders {
		id, total := row[0], row[3]
		if out.Read[i]["id"] != id || out.Read[i]["total"] != total {
			t.Errorf("row %d read as %v, the report has %v", i, out.Read[i], row)
		}
		v, _ := strconv.ParseFloat(total, 64)
		it := out.Each[i]
		wantNext, ran, skipped := "open_catalog", it.Catalog != nil, it.Product != nil
		if v >= threshold {
			large++
			wantNext, ran, skipped = "open_product", it.Product != nil, it.Catalog != nil
		}
		if it.Check.Next != wantNext || !ran || skipped {
			t.Errorf("order %s (total %s): routed to %q (product %v, catalog %v), want %s", id, total, it.Check.Next, it.Product, it.Catalog, wantNext)
		}
		if it.Save == nil || len(it.Save.Files) != 1 || it.Save.Files[0].Filename != "order "+id+".pdf" {
			t.Errorf("order %s: saved %+v, want order %s.pdf", id, it.Save, id)
		}
	}
	if large == 0 || large == len(orders) {
		t.Errorf("the command's threshold %v does not split the report's orders (%d large of %d)", threshold, large, len(orders))
	}
	pdfs := 0
	for _, f := range r.DownloadedFiles {
		if b := fetch(t, f.URL); bytes.HasPrefix(b, []byte("%PDF-")) {
			pdfs++
		}
	}
	if pdfs != len(orders) {
		t.Errorf("%d PDFs among the run's files, want %d", pdfs, len(orders))
	}
}
