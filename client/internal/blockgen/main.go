// Command blockgen writes client/blocks_gen.go: what every block struct
// has in the same form, generated from the block type constants and the
// block structs of client/blocks.go. The constant BlockTypeX names the
// struct XBlock, which gets
//
//   - a BlockType method that returns BlockTypeX,
//   - a MarshalJSON method that writes "block_type" first, then the fields,
//   - a copy method that copies the block, deeply on request: each field
//     is copied by the rule for its type in fieldCopies,
//
// and the list BlockTypes and the functions newBlock (the struct of a
// type), copyStruct (the copy method of any block struct) and
// parameterKeysField (the ParameterKeys field of the structs that have
// one) follow the order of the constants. Run it with go generate in client/; a test fails when
// blocks_gen.go is not what it would write.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"slices"
	"strings"
	"text/template"
)

func main() {
	in := flag.String("in", "blocks.go", "the Go file that declares the block types and structs")
	out := flag.String("out", "blocks_gen.go", "the file to write")
	flag.Parse()
	src, err := os.ReadFile(*in)
	if err == nil {
		var code []byte
		if code, err = generate(*in, src); err == nil {
			err = os.WriteFile(*out, code, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "blockgen:", err)
		os.Exit(1)
	}
}

// block is one block type: its constant and its struct.
type block struct {
	Const, Struct string
	// DeepCopies are the statements that make the shallow copy c of the
	// block b share no memory with it, one per field that needs one.
	DeepCopies []string
	// HasParameterKeys is whether the struct has a field ParameterKeys of
	// type []string.
	HasParameterKeys bool
}

// fieldCopy says how a deep copy copies a field of one type.
type fieldCopy struct {
	// expr copies the value %s: a format for fmt.Sprintf, "" for a type
	// without pointers, slices or maps in it, whose values the copy of
	// the struct has already copied.
	expr string
	// pkg is the standard package expr calls, if any.
	pkg string
}

// fieldCopies are the rules of the deep copy of a block, by the type of
// the field as written in the struct. The functions and methods they call
// are the client package's own. A field of a type not listed stops the
// generator, so that a new field is never shared by a deep copy by
// mistake: add its type here.
var fieldCopies = map[string]fieldCopy{
	"string":    {},
	"bool":      {},
	"int":       {},
	"RunEngine": {},
	// BranchCriteria holds strings only.
	"BranchCriteria":    {},
	"*int":              {expr: "clonePointer(%s)"},
	"*bool":             {expr: "clonePointer(%s)"},
	"*float64":          {expr: "clonePointer(%s)"},
	"[]string":          {expr: "slices.Clone(%s)", pkg: "slices"},
	"json.RawMessage":   {expr: "slices.Clone(%s)", pkg: "slices"},
	"map[string]string": {expr: "maps.Clone(%s)", pkg: "maps"},
	"*Parameter":        {expr: "cloneParameterPointer(%s)"},
	"Blocks":            {expr: "%s.clone()"},
	"BlockBase":         {expr: "cloneBase(%s)"},
	"[]BranchCondition": {expr: "cloneBranchConditions(%s)"},
	"[]CodeBlockStep":   {expr: "cloneCodeBlockSteps(%s)"},
}

// generate returns the generated file for the Go source src (read from
// the file name, for messages).
func generate(name string, src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	blocks, structs, err := blockTypes(fset, f)
	if err != nil {
		return nil, err
	}
	var imports []string
	for i := range blocks {
		b := &blocks[i]
		for _, fld := range structs[b.Struct] {
			rule, ok := fieldCopies[fld.typ]
			if !ok {
				return nil, fmt.Errorf("%s: field %s.%s: no rule in fieldCopies for copying a %s", fset.Position(fld.pos), b.Struct, fld.name, fld.typ)
			}
			if rule.expr != "" {
				b.DeepCopies = append(b.DeepCopies, fmt.Sprintf("c.%s = "+rule.expr, fld.name, "b."+fld.name))
			}
			if rule.pkg != "" && !slices.Contains(imports, rule.pkg) {
				imports = append(imports, rule.pkg)
			}
			b.HasParameterKeys = b.HasParameterKeys || fld.name == "ParameterKeys" && fld.typ == "[]string"
		}
	}
	slices.Sort(imports)
	var buf bytes.Buffer
	if err := fileTemplate.Execute(&buf, struct {
		Package string
		Imports []string
		Blocks  []block
	}{f.Name.Name, imports, blocks}); err != nil {
		return nil, err
	}
	return format.Source(buf.Bytes())
}

// field is a field of a struct: its name (for an embedded field, its
// type's), its type as written and where it is declared.
type field struct {
	name, typ string
	pos       token.Pos
}

// blockTypes returns the constants of type BlockType, in the order they
// are declared, each with its struct, which must be declared in f too,
// and the fields of the structs f declares, by name.
func blockTypes(fset *token.FileSet, f *ast.File) ([]block, map[string][]field, error) {
	structs := map[string][]field{}
	var blocks []block
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, s := range g.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if st, ok := s.Type.(*ast.StructType); ok {
					structs[s.Name.Name] = structFields(st)
				}
			case *ast.ValueSpec:
				if g.Tok != token.CONST {
					continue
				}
				if t, ok := s.Type.(*ast.Ident); !ok || t.Name != "BlockType" {
					continue
				}
				for _, n := range s.Names {
					kind, ok := strings.CutPrefix(n.Name, "BlockType")
					if !ok || kind == "" {
						return nil, nil, fmt.Errorf("%s: constant %s of type BlockType: want the name BlockType<Kind>", fset.Position(n.Pos()), n.Name)
					}
					blocks = append(blocks, block{Const: n.Name, Struct: kind + "Block"})
				}
			}
		}
	}
	if len(blocks) == 0 {
		return nil, nil, fmt.Errorf("%s: no constants of type BlockType", fset.Position(f.Package))
	}
	for _, b := range blocks {
		if _, ok := structs[b.Struct]; !ok {
			return nil, nil, fmt.Errorf("%s: no struct %s for the constant %s", fset.Position(f.Package), b.Struct, b.Const)
		}
	}
	return blocks, structs, nil
}

// structFields returns the fields of st, in order.
func structFields(st *ast.StructType) []field {
	var fields []field
	for _, fl := range st.Fields.List {
		typ := types.ExprString(fl.Type)
		if len(fl.Names) == 0 { // embedded: named after its type
			fields = append(fields, field{name: strings.TrimPrefix(typ, "*"), typ: typ, pos: fl.Pos()})
		}
		for _, n := range fl.Names {
			fields = append(fields, field{name: n.Name, typ: typ, pos: n.Pos()})
		}
	}
	return fields
}

var fileTemplate = template.Must(template.New("").Parse(`// Code generated by blockgen (client/internal/blockgen) from blocks.go; DO NOT EDIT.

package {{.Package}}
{{if .Imports}}
import (
{{- range .Imports}}
	"{{.}}"
{{- end}}
)
{{end}}
// BlockTypes lists every block type this package has a struct for.
var BlockTypes = []BlockType{
{{- range .Blocks}}
	{{.Const}},
{{- end}}
}

// newBlock returns a pointer to a zero block of type t, or nil if t is not
// known.
func newBlock(t BlockType) Block {
	switch t {
{{- range .Blocks}}
	case {{.Const}}:
		return new({{.Struct}})
{{- end}}
	}
	return nil
}

// copyStruct is copyBlock for the block structs listed in BlockTypes; b
// must not be a nil pointer.
func copyStruct(b Block, deep bool) Block {
	switch x := b.(type) {
{{- range .Blocks}}
	case *{{.Struct}}:
		return x.copy(deep)
{{- end}}
	}
	return b
}

// parameterKeysField is BlockParameterKeys for a block that is not a nil
// pointer.
func parameterKeysField(b Block) *[]string {
	switch x := b.(type) {
{{- range .Blocks}}{{if .HasParameterKeys}}
	case *{{.Struct}}:
		return &x.ParameterKeys
{{- end}}{{end}}
	}
	return nil
}

// The methods below are the same for every block struct: BlockType names the
// type, MarshalJSON writes "block_type" first, and copy returns a new block
// holding the block's fields; with deep, copies of them that share no memory
// with the block. MarshalJSON converts to a local type without methods so
// that encoding does not recurse.
{{range .Blocks}}
// BlockType returns {{.Const}}.
func ({{.Struct}}) BlockType() BlockType { return {{.Const}} }

// MarshalJSON writes "block_type" first, then the fields.
func (b {{.Struct}}) MarshalJSON() ([]byte, error) {
	type fields {{.Struct}}
	return marshalBlock({{.Const}}, fields(b))
}

func (b *{{.Struct}}) copy(deep bool) *{{.Struct}} {
	c := *b
{{- if .DeepCopies}}
	if deep {
{{- range .DeepCopies}}
		{{.}}
{{- end}}
	}
{{- end}}
	return &c
}
{{end}}`))
