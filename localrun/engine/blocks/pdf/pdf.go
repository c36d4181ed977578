// Package pdf reads and writes the PDFs of the PDF blocks (pdf_parser,
// pdf_fill, split_pdf): the text of each page, read by poppler's
// pdftotext; the fields of a form (AcroForm), and the form filled in; the
// number of pages, and a document cut from consecutive pages. It also
// matches the values a payload or a model gives to a form's fields, and
// reads the page ranges a split_pdf prompt lists.
//
// It knows nothing of runs: it takes bytes, paths and plain values and
// returns plain values; the block interpreter (package blocks) renders the
// blocks' templates, asks the model and keeps the files.
package pdf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/form"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
)

var pdfcpuSetup sync.Once

// config is pdfcpu's configuration: the defaults, never read from or
// written to a configuration directory.
func config(cmd model.CommandMode) *model.Configuration {
	pdfcpuSetup.Do(api.DisableConfigDir)
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	conf.Cmd = cmd
	return conf
}

// unreadable explains why pdfcpu could not read or write a PDF.
func unreadable(err error) error {
	if errors.Is(err, pdfcpu.ErrWrongPassword) {
		return errors.New("the PDF is protected by a password; it cannot be opened")
	}
	return fmt.Errorf("the file is not a readable PDF: %v", err)
}

// readPDF reads and validates a PDF. pdfcpu turns its own panics into
// errors; a panic it lets through is an unreadable file too.
func readPDF(data []byte, cmd model.CommandMode) (ctx *model.Context, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the file is not a readable PDF: %v", r)
		}
	}()
	ctx, err = api.ReadValidateAndOptimize(bytes.NewReader(data), config(cmd))
	if err != nil {
		return nil, unreadable(err)
	}
	return ctx, nil
}

// exportForm returns the PDF's form as pdfcpu exports it; nil when the
// PDF has no form fields.
func exportForm(data []byte) (*form.FormGroup, error) {
	ctx, err := readPDF(data, model.EXPORTFORMFIELDS)
	if err != nil {
		return nil, err
	}
	if fields, err := form.Fields(ctx.XRefTable); err != nil || len(fields) == 0 {
		return nil, nil
	}
	fg, ok, err := form.ExportForm(ctx.XRefTable, "source.pdf")
	if err != nil {
		return nil, fmt.Errorf("reading the PDF's form: %v", err)
	}
	if !ok || len(fg.Forms) == 0 {
		return nil, nil
	}
	return fg, nil
}

// FormFields lists the fields of the PDF's form.
func FormFields(data []byte) ([]Field, error) {
	fg, err := exportForm(data)
	if err != nil || fg == nil {
		return nil, err
	}
	f := fg.Forms[0]
	var out []Field
	for _, x := range f.TextFields {
		out = append(out, Field{Name: x.Name, AltName: x.AltName, Type: "text", Value: nonEmpty(x.Value), Locked: x.Locked})
	}
	for _, x := range f.DateFields {
		out = append(out, Field{Name: x.Name, AltName: x.AltName, Type: "date", Value: nonEmpty(x.Value), Locked: x.Locked})
	}
	for _, x := range f.CheckBoxes {
		out = append(out, Field{Name: x.Name, AltName: x.AltName, Type: "checkbox", Value: x.Value, Locked: x.Locked})
	}
	for _, x := range f.RadioButtonGroups {
		out = append(out, Field{Name: x.Name, AltName: x.AltName, Type: "radio", Options: x.Options, Value: nonEmpty(x.Value), Locked: x.Locked})
	}
	for _, x := range f.ComboBoxes {
		out = append(out, Field{Name: x.Name, AltName: x.AltName, Type: "combobox", Options: x.Options, Value: nonEmpty(x.Value), Locked: x.Locked, Editable: x.Editable})
	}
	for _, x := range f.ListBoxes {
		var v any
		if len(x.Values) > 0 {
			v = x.Values
		}
		out = append(out, Field{Name: x.Name, AltName: x.AltName, Type: "listbox", Options: x.Options, Value: v, Locked: x.Locked})
	}
	return out, nil
}

func nonEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// FillForm fills the PDF's form with values (by field name, as
// FieldValue converted them) and returns the filled PDF.
func FillForm(data []byte, values map[string]any) (_ []byte, err error) {
	fg, err := exportForm(data)
	if err != nil {
		return nil, err
	}
	if fg == nil {
		return nil, errors.New("the PDF has no form fields to fill")
	}
	f := &fg.Forms[0]
	set := func(name string) (any, bool) { v, ok := values[name]; return v, ok }
	for _, x := range f.TextFields {
		if v, ok := set(x.Name); ok {
			x.Value, _ = v.(string)
		}
	}
	for _, x := range f.DateFields {
		if v, ok := set(x.Name); ok {
			x.Value, _ = v.(string)
		}
	}
	for _, x := range f.CheckBoxes {
		if v, ok := set(x.Name); ok {
			x.Value, _ = v.(bool)
		}
	}
	for _, x := range f.RadioButtonGroups {
		if v, ok := set(x.Name); ok {
			x.Value, _ = v.(string)
		}
	}
	for _, x := range f.ComboBoxes {
		if v, ok := set(x.Name); ok {
			x.Value, _ = v.(string)
		}
	}
	for _, x := range f.ListBoxes {
		if v, ok := set(x.Name); ok {
			x.Values, _ = v.([]string)
		}
	}
	in, err := json.Marshal(fg)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("filling the PDF's form: %v", r)
		}
	}()
	var out bytes.Buffer
	if err := api.FillForm(bytes.NewReader(data), bytes.NewReader(in), &out, config(model.FILLFORMFIELDS)); err != nil {
		if errors.Is(err, pdfcpu.ErrWrongPassword) {
			return nil, unreadable(err)
		}
		return nil, fmt.Errorf("filling the PDF's form: %v", err)
	}
	return out.Bytes(), nil
}

// PageCount is the number of pages of the PDF.
func PageCount(data []byte) (int, error) {
	ctx, err := readPDF(data, model.VALIDATE)
	if err != nil {
		return 0, err
	}
	return ctx.PageCount, nil
}

// Pages returns a PDF of the pages from to thru (from 1) of the PDF.
func Pages(data []byte, from, thru int) (_ []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cutting pages %d-%d: %v", from, thru, r)
		}
	}()
	var out bytes.Buffer
	if err := api.Trim(bytes.NewReader(data), &out, []string{fmt.Sprintf("%d-%d", from, thru)}, config(model.TRIM)); err != nil {
		if errors.Is(err, pdfcpu.ErrWrongPassword) {
			return nil, unreadable(err)
		}
		return nil, fmt.Errorf("cutting pages %d-%d: %v", from, thru, err)
	}
	return out.Bytes(), nil
}
