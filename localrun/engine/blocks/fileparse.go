package blocks

// The file_url_parser block (and pdf_parser, its PDF-only form): the file
// at file_url (an http(s) URL, or the name of a file the run downloaded or
// saved) is parsed by its type, without a model:
//
//   - csv and tsv: a list of objects, one a row, keyed by the first row's
//     cells (a row longer than the header keys its extra cells column_N);
//   - excel (.xlsx): the same, from the workbook's first sheet;
//   - json: the value;
//   - docx: {"text": the document's paragraphs, one a line};
//   - text (.txt, .md, text/plain): {"text": the file};
//   - pdf: {"text": the text of its pages, apart by an empty line,
//     "page_count"}, read by pdftotext (see pdf.go).
//
// file_type auto_detect (the default) goes by the file's name, then its
// Content-Type. With json_schema, the parsed value must match it: shaping
// a file into another shape needs a model, which this block does not ask
// yet. Images and zip archives are refused with a reason.

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/xuri/excelize/v2"

	"github.com/abctl/abctl/localrun/engine/steplog"
)

// maxParsedBytes bounds the text a file may hold.
const maxParsedBytes = 20 << 20

func (in fileBlocks) fileParser(ctx context.Context, label, rawURL, fileType string, schema json.RawMessage, sc *scope) (any, error) {
	u, err := sc.renderURL(rawURL)
	if err != nil {
		return nil, err
	}
	rec, err := in.steps.Start(label, steplog.Action{Type: "parse_file", Text: steplog.ShownURL(u)})
	if err != nil {
		return nil, err
	}
	out, typ, err := in.parseFile(ctx, u, fileType)
	if err == nil && len(schema) > 0 && string(schema) != "null" {
		err = matchSchema(out, schema)
	}
	result := ""
	if err == nil {
		result = "parsed as " + typ
	}
	in.steps.End(rec, "", result, err)
	return out, err
}

func (in fileBlocks) parseFile(ctx context.Context, fileURL, fileType string) (any, string, error) {
	path, err := in.sourceFile(ctx, fileURL)
	if err != nil {
		return nil, "", err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	typ := strings.ToLower(strings.TrimSpace(fileType))
	if typ == "" || typ == "auto_detect" {
		typ = detectType(path, data)
	}
	switch typ {
	case "csv", "tsv":
		out, err := parseCSV(data, typ)
		return out, typ, err
	case "excel", "xlsx":
		out, err := parseExcel(data)
		return out, "excel", err
	case "json":
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, typ, fmt.Errorf("the file is not valid JSON: %v", err)
		}
		return v, typ, nil
	case "docx":
		text, err := docxText(data)
		return map[string]any{"text": text}, typ, err
	case "text":
		return map[string]any{"text": string(data)}, typ, nil
	case "pdf":
		out, err := parsePDFText(ctx, path)
		return out, typ, err
	case "image":
		return nil, typ, errors.New("the file is an image: reading it needs a vision model, which this block does not ask yet")
	case "zip":
		return nil, typ, errors.New("the file is a zip archive: this daemon's engine does not open archives yet")
	}
	return nil, typ, fmt.Errorf("file_type %q is not one of auto_detect, csv, excel, pdf, image, docx, zip", fileType)
}

// detectType names a file's type from its name, then its content.
func detectType(path string, data []byte) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return "csv"
	case ".tsv", ".tab":
		return "tsv"
	case ".xlsx", ".xlsm":
		return "excel"
	case ".json":
		return "json"
	case ".docx":
		return "docx"
	case ".pdf":
		return "pdf"
	case ".zip":
		return "zip"
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
		return "image"
	case ".txt", ".md", ".text", ".log":
		return "text"
	}
	switch {
	case bytes.HasPrefix(data, []byte("%PDF")):
		return "pdf"
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		if r, err := zip.NewReader(bytes.NewReader(data), int64(len(data))); err == nil {
			for _, f := range r.File {
				switch {
				case strings.HasPrefix(f.Name, "xl/"):
					return "excel"
				case strings.HasPrefix(f.Name, "word/"):
					return "docx"
				}
			}
		}
		return "zip"
	}
	if t := strings.TrimSpace(string(data[:min(len(data), 1)])); t == "{" || t == "[" {
		if json.Valid(data) {
			return "json"
		}
	}
	if mt, _, err := mime.ParseMediaType(mime.TypeByExtension(filepath.Ext(path))); err == nil && strings.HasPrefix(mt, "image/") {
		return "image"
	}
	return "text"
}

// rows turns a table with its header row into objects.
func rows(table [][]string) []any {
	out := []any{}
	if len(table) == 0 {
		return out
	}
	header := table[0]
	for _, row := range table[1:] {
		obj := map[string]any{}
		empty := true
		for j, cell := range row {
			key := "column_" + strconv.Itoa(j+1)
			if j < len(header) && strings.TrimSpace(header[j]) != "" {
				key = strings.TrimSpace(header[j])
			}
			obj[key] = cell
			empty = empty && cell == ""
		}
		if !empty {
			out = append(out, obj)
		}
	}
	return out
}

func parseCSV(data []byte, typ string) (any, error) {
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte("\ufeff"))))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	if typ == "tsv" {
		r.Comma = '\t'
	}
	table, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("the file is not valid %s: %v", strings.ToUpper(typ), err)
	}
	return rows(table), nil
}

func parseExcel(data []byte) (any, error) {
	f, err := excelize.OpenReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("the file is not an Excel workbook (.xlsx): %v", err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	if len(sheets) == 0 {
		return []any{}, nil
	}
	table, err := f.GetRows(sheets[0])
	if err != nil {
		return nil, fmt.Errorf("reading sheet %q: %v", sheets[0], err)
	}
	return rows(table), nil
}

// docxText returns the paragraphs of a Word document, one a line.
func docxText(data []byte) (string, error) {
	r, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", fmt.Errorf("the file is not a Word document (.docx): %v", err)
	}
	for _, f := range r.File {
		if f.Name != "word/document.xml" {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return "", err
		}
		defer rc.Close()
		dec := xml.NewDecoder(io.LimitReader(rc, maxParsedBytes))
		var b strings.Builder
		inText := false
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				return strings.TrimSpace(b.String()), nil
			}
			if err != nil {
				return "", fmt.Errorf("the document's XML cannot be read: %v", err)
			}
			switch t := tok.(type) {
			case xml.StartElement:
				switch t.Name.Local {
				case "t":
					inText = true
				case "tab":
					b.WriteByte('\t')
				case "br":
					b.WriteByte('\n')
				}
			case xml.EndElement:
				switch t.Name.Local {
				case "t":
					inText = false
				case "p":
					b.WriteByte('\n')
				}
			case xml.CharData:
				if inText {
					b.Write(t)
				}
			}
		}
	}
	return "", errors.New("the file is not a Word document (.docx): it has no word/document.xml")
}

// matchSchema checks the parsed value against the block's json_schema.
func matchSchema(v any, schema json.RawMessage) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return fmt.Errorf("json_schema is not valid JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("block.json", doc); err != nil {
		return fmt.Errorf("json_schema: %v", err)
	}
	s, err := c.Compile("block.json")
	if err != nil {
		return fmt.Errorf("json_schema is not a valid schema: %v", err)
	}
	// Validate the value as JSON decodes it (numbers as float64).
	raw, _ := json.Marshal(v)
	inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err := s.Validate(inst); err != nil {
		return fmt.Errorf("the parsed file does not match json_schema (shaping a file into another shape needs a model, which this block does not ask yet): %v", err)
	}
	return nil
}
