// Package printer writes what abctl's commands print on stdout in the format
// -o asks for: a table (the default; "wide" adds columns), JSON, YAML, or
// "name" (one kind/name per line, for xargs).
//
// Tables follow the terminal: on one, a header in capitals, columns aligned
// and cut to the terminal's width, times relative ("5 minutes ago"); piped,
// no header, tab-separated columns and RFC 3339 times, so that cut and awk
// work on them.
package printer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

// Format is an output format.
type Format string

// The output formats.
const (
	Table Format = "table"
	Wide  Format = "wide"
	JSON  Format = "json"
	YAML  Format = "yaml"
	Name  Format = "name"
)

// AllFormats are the formats of commands that print resources.
var AllFormats = []Format{Table, Wide, JSON, YAML, Name}

// AddFlag adds -o/--output to cmd, limited to formats (the first is the
// default), with shell completion of the values. The format is read into
// target, and checked before the command runs (in its PreRunE): any other
// is a usage error, and the command does not run.
func AddFlag(cmd *cobra.Command, target *Format, formats ...Format) {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = string(f)
	}
	cmd.Flags().StringVarP((*string)(target), "output", "o", names[0], "output format: "+strings.Join(names, ", "))
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return names, cobra.ShellCompDirectiveNoFileComp
	})
	cmd.Annotations = withAnnotation(cmd.Annotations, "formats", strings.Join(names, ","))
	next := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if _, err := Check(cmd, string(*target)); err != nil {
			return err
		}
		if next != nil {
			return next(cmd, args)
		}
		return nil
	}
}

func withAnnotation(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// Check returns a usage error when format is not one AddFlag allowed on cmd.
func Check(cmd *cobra.Command, format string) (Format, error) {
	allowed := strings.Split(cmd.Annotations["formats"], ",")
	if slices.Contains(allowed, format) {
		return Format(format), nil
	}
	return "", cmdutil.Usagef(cmd, "-o %q is not a format of %q; use one of: %s", format, cmd.CommandPath(), strings.Join(allowed, ", "))
}

// WriteJSON writes v as indented JSON. A json.RawMessage (the service's own
// bytes) is indented as it is, keeping its key order.
func WriteJSON(w io.Writer, v any) error {
	var b []byte
	var err error
	if raw, ok := v.(json.RawMessage); ok {
		var buf bytes.Buffer
		err = json.Indent(&buf, raw, "", "  ")
		b = buf.Bytes()
	} else {
		b, err = marshalIndent(v)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func marshalIndent(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// WriteYAML writes v as YAML, keeping the key order of its JSON form.
func WriteYAML(w io.Writer, v any) error {
	var raw []byte
	if r, ok := v.(json.RawMessage); ok {
		raw = r
	} else {
		var err error
		if raw, err = marshalIndent(v); err != nil {
			return err
		}
	}
	b, err := JSONToYAML(raw)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// JSONToYAML converts JSON to YAML, keeping the order of object members.
func JSONToYAML(data []byte) ([]byte, error) {
	var node yaml.Node
	// YAML 1.2 is a superset of JSON: yaml.v3 reads JSON into nodes in
	// document order; clearing the flow style makes it print block YAML.
	if err := yaml.Unmarshal(data, &node); err != nil {
		return nil, fmt.Errorf("convert JSON to YAML: %w", err)
	}
	blockStyle(&node)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&node); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func blockStyle(n *yaml.Node) {
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		n.Style = 0
	}
	if n.Kind == yaml.ScalarNode && n.Style == yaml.DoubleQuotedStyle && n.Tag == "!!str" {
		// Quote only where YAML needs it.
		n.Style = 0
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// TablePrinter collects rows and writes them as the terminal wants.
type TablePrinter struct {
	io      *iostreams.IOStreams
	headers []string
	rows    [][]string
	now     time.Time
}

// NewTable returns a table with the given column headers.
func NewTable(io *iostreams.IOStreams, now time.Time, headers ...string) *TablePrinter {
	return &TablePrinter{io: io, headers: headers, now: now}
}

// AddRow adds a row; missing cells are empty.
func (t *TablePrinter) AddRow(cells ...string) {
	row := make([]string, len(t.headers))
	copy(row, cells)
	for i, c := range row {
		// A cell is one line: tabs and newlines would break the columns.
		row[i] = strings.Join(strings.Fields(c), " ")
	}
	t.rows = append(t.rows, row)
}

// Time renders a time cell: relative on a terminal, RFC 3339 otherwise,
// "" for the zero time.
func (t *TablePrinter) Time(at time.Time) string {
	if at.IsZero() {
		return ""
	}
	if !t.io.IsStdoutTTY() {
		return at.UTC().Format(time.RFC3339)
	}
	return Ago(t.now, at)
}

// Render writes the table to the IOStreams' stdout.
func (t *TablePrinter) Render() error {
	out := t.io.Out
	if !t.io.IsStdoutTTY() {
		var b strings.Builder
		for _, r := range t.rows {
			b.WriteString(strings.Join(r, "\t"))
			b.WriteByte('\n')
		}
		_, err := io.WriteString(out, b.String())
		return err
	}
	widths := make([]int, len(t.headers))
	for i, h := range t.headers {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, r := range t.rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	whole := make([]bool, len(t.headers))
	for i, h := range t.headers {
		// Ids, names, files and links are copied or opened, not read:
		// cut, they would be useless.
		whole[i] = h == "id" || h == "name" || h == "file" || h == "url"
	}
	fitWidths(widths, whole, t.io.Width())
	cs := t.io.ColorScheme()
	var b strings.Builder
	line := func(cells []string, header bool) {
		for i, c := range cells {
			c = truncate(c, widths[i])
			pad := widths[i] - utf8.RuneCountInString(c)
			if header {
				c = cs.Bold(c)
			}
			b.WriteString(c)
			if i < len(cells)-1 {
				b.WriteString(strings.Repeat(" ", pad+2))
			}
		}
		b.WriteByte('\n')
	}
	upper := make([]string, len(t.headers))
	for i, h := range t.headers {
		upper[i] = strings.ToUpper(h)
	}
	line(upper, true)
	for _, r := range t.rows {
		line(r, false)
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// fitWidths shrinks the widest columns, except those kept whole, until the
// row fits in total columns (two spaces between columns), keeping each at
// least 8 wide. A row that cannot fit even so (a link wider than the
// terminal) is left whole: the terminal wraps it anyway, and cutting the
// other columns would lose them for nothing.
func fitWidths(widths []int, whole []bool, total int) {
	const gap, minWidth = 2, 8
	sum := func() int {
		s := gap * (len(widths) - 1)
		for _, w := range widths {
			s += w
		}
		return s
	}
	least := gap * (len(widths) - 1)
	for i, w := range widths {
		if whole[i] {
			least += w
		} else {
			least += min(w, minWidth)
		}
	}
	if least > total {
		return
	}
	for sum() > total {
		widest := -1
		for i, w := range widths {
			if !whole[i] && (widest < 0 || w > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 || widths[widest] <= minWidth {
			return
		}
		widths[widest]--
	}
}

// truncate cuts s to n characters, marking the cut with "…".
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 1 {
		return string([]rune(s)[:n])
	}
	return string([]rune(s)[:n-1]) + "…"
}

// Ago says how long before now t was, in the largest whole unit.
func Ago(now, t time.Time) string {
	d := now.Sub(t)
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute") + " ago"
	case d < 24*time.Hour:
		return plural(int(d/time.Hour), "hour") + " ago"
	case d < 30*24*time.Hour:
		return plural(int(d/(24*time.Hour)), "day") + " ago"
	case d < 365*24*time.Hour:
		return plural(int(d/(30*24*time.Hour)), "month") + " ago"
	}
	return plural(int(d/(365*24*time.Hour)), "year") + " ago"
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// Listing is what a command prints in any format: Value for JSON and YAML,
// Names for -o name (kind/id lines), and a table of Headers whose rows Rows
// adds. A command builds one and calls Print, whatever -o says.
type Listing struct {
	Value   any
	Names   []string
	Headers []string
	Rows    func(t *TablePrinter)
}

// Print writes l on ios's stdout in format (Table and Wide both print the
// table; the command chooses the wide columns in Headers and Rows).
func (l Listing) Print(ios *iostreams.IOStreams, now time.Time, format Format) error {
	switch format {
	case JSON:
		return WriteJSON(ios.Out, l.Value)
	case YAML:
		return WriteYAML(ios.Out, l.Value)
	case Name:
		var b strings.Builder
		for _, n := range l.Names {
			b.WriteString(n)
			b.WriteByte('\n')
		}
		_, err := io.WriteString(ios.Out, b.String())
		return err
	}
	t := NewTable(ios, now, l.Headers...)
	if l.Rows != nil {
		l.Rows(t)
	}
	return t.Render()
}
