package testsite

import (
	"strconv"
)

// Downloadable files: their paths, the names a browser saves them under and
// their exact contents.
const (
	FileReport = "/files/report.csv"  // Content-Disposition: attachment; filename="report 2026.csv"
	FileNotes  = "/files/notes.txt"   // attachment, opened by a target=_blank link
	FileExport = "/files/export.json" // no disposition; download.html saves it through a blob URL
	FilePlain  = "/files/plain.txt"   // no disposition; download.html links it with download="renamed.txt"
	FileBig    = "/files/big.bin"     // ?size=N bytes of BigFile(N), attachment

	ReportFilename = "report 2026.csv"
	NotesFilename  = "notes.txt"
	ExportFilename = "export.json"
	PlainFilename  = "renamed.txt"
	BigFilename    = "big.bin"

	ReportCSV = "id,product,quantity,total\r\n" +
		"1,Trail Running Shoes,2,179.98\r\n" +
		"2,Waterproof Jacket,1,149.00\r\n" +
		"3,\"Merino Wool Socks, 3 pack\",4,98.00\r\n"
	NotesTXT   = "Meeting notes\nThe quarterly review moved to Thursday.\n"
	ExportJSON = `{"export":"abctl-test-site","items":[{"id":1,"name":"alpha"},{"id":2,"name":"beta"}]}` + "\n"
	PlainTXT   = "plain text served without a Content-Disposition header\n"

	// BigFileDefault is the size of /files/big.bin without ?size=, and
	// BigFileMax the largest size it serves.
	BigFileDefault = 1 << 20
	BigFileMax     = 1 << 30
	// DownloadBigDefault is the size the big link of download.html asks
	// for when the page has no ?big=N.
	DownloadBigDefault = 5 << 20
)

// BigPath is the path of a big.bin of n bytes.
func BigPath(n int64) string { return FileBig + "?size=" + strconv.FormatInt(n, 10) }

// BigFile returns the exact bytes /files/big.bin?size=n serves: byte i is
// i mod 251.
func BigFile(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}

// Product is a row of the products page.
type Product struct {
	Name    string
	SKU     string
	Price   string // as shown, with its currency sign
	InStock bool   // the Stock column reads "In stock" or "Out of stock"
}

// Products returns the rows of PageProducts, in page order.
func Products() []Product {
	return []Product{
		{"Trail Running Shoes", "SKU-1001", "$89.99", true},
		{"Waterproof Jacket", "SKU-1002", "$149.00", true},
		{"Merino Wool Socks (3 pack)", "SKU-1003", "$24.50", true},
		{"Insulated Water Bottle", "SKU-1004", "$32.00", false},
		{"Headlamp 400 lm", "SKU-1005", "$45.95", true},
		{"Compact Camping Stove", "SKU-1006", "$59.99", false},
		{"Trekking Poles (pair)", "SKU-1007", "$119.00", true},
		{"Dry Bag 20 L", "SKU-1008", "$19.99", true},
	}
}
