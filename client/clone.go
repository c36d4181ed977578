package client

import (
	"maps"
	"slices"
)

// This file holds the deep copies of the definition types that are
// written by hand; the block structs' are generated (their copy methods,
// in blocks_gen.go, by the rules of client/internal/blockgen).
// TestDefinitionSharesNothing checks that together they copy every slice,
// map and pointer.

// Clone returns a copy of p that shares no memory with it.
func (p *Parameter) Clone() Parameter {
	c := *p
	c.DefaultValue = slices.Clone(p.DefaultValue)
	c.Value = slices.Clone(p.Value)
	c.CredentialIDs = slices.Clone(p.CredentialIDs)
	c.FallbackCredentialIDs = slices.Clone(p.FallbackCredentialIDs)
	c.BitwardenIdentityFields = slices.Clone(p.BitwardenIdentityFields)
	c.Source = cloneParameterPointer(p.Source)
	c.DeletedAt = clonePointer(p.DeletedAt)
	return c
}

// cloneParameterPointer returns a pointer to p.Clone(), nil for nil.
func cloneParameterPointer(p *Parameter) *Parameter {
	if p == nil {
		return nil
	}
	c := p.Clone()
	return &c
}

// clonePointer returns a pointer to a copy of *p, nil for nil. T must hold
// no pointers, slices or maps, or the copy shares them.
func clonePointer[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// copyBlock returns a new block of b's type holding b's fields, with deep
// copies of them that share no memory with b when deep is set. It returns
// b itself when b is nil or a nil pointer, or of a type that is not this
// package's.
func copyBlock(b Block, deep bool) Block {
	if IsNilBlock(b) {
		return b
	}
	if u, ok := b.(*UnknownBlock); ok {
		return u.copy(deep)
	}
	return copyStruct(b, deep)
}

// clone returns a copy of d that shares no memory with it.
func (d *WorkflowDefinition) clone() WorkflowDefinition {
	c := *d
	c.Version = clonePointer(d.Version)
	if d.Parameters != nil {
		c.Parameters = make(Parameters, len(d.Parameters))
		for i := range d.Parameters {
			c.Parameters[i] = d.Parameters[i].Clone()
		}
	}
	c.Blocks = d.Blocks.clone()
	c.ErrorCodeMapping = maps.Clone(d.ErrorCodeMapping)
	c.CompletionContract = slices.Clone(d.CompletionContract)
	c.CodeArtifactMetadata = slices.Clone(d.CodeArtifactMetadata)
	return c
}

// clone returns a copy of bs whose blocks share no memory with those of
// bs.
func (bs Blocks) clone() Blocks {
	if bs == nil {
		return nil
	}
	c := make(Blocks, len(bs))
	for i, b := range bs {
		c[i] = copyBlock(b, true)
	}
	return c
}

// cloneBase returns a copy of b that shares no memory with it.
func cloneBase(b BlockBase) BlockBase {
	b.Model = cloneModel(b.Model)
	b.OutputParameter = cloneParameterPointer(b.OutputParameter)
	if b.Parameters != nil {
		ps := make([]Parameter, len(b.Parameters))
		for i := range b.Parameters {
			ps[i] = b.Parameters[i].Clone()
		}
		b.Parameters = ps
	}
	b.missing = slices.Clone(b.missing)
	return b
}

// copy returns a new UnknownBlock holding u's fields; with deep, copies of
// them that share no memory with u.
func (u *UnknownBlock) copy(deep bool) *UnknownBlock {
	c := *u
	if deep {
		c.Raw = slices.Clone(u.Raw)
		c.base = cloneBase(u.base)
	}
	return &c
}

func cloneBranchConditions(bcs []BranchCondition) []BranchCondition {
	c := slices.Clone(bcs)
	for i := range c {
		c[i].Criteria = slices.Clone(bcs[i].Criteria)
	}
	return c
}

func cloneCodeBlockSteps(steps []CodeBlockStep) []CodeBlockStep {
	c := slices.Clone(steps)
	for i := range c {
		c[i].LineStart = clonePointer(steps[i].LineStart)
		c[i].LineEnd = clonePointer(steps[i].LineEnd)
	}
	return c
}

// cloneModel returns a copy of m that shares no memory with it, for the
// values JSON decodes into (objects as map[string]any, arrays as []any,
// which it copies in depth); a value of another type is kept as it is.
func cloneModel(m Model) Model {
	if m == nil {
		return nil
	}
	c := make(Model, len(m))
	for k, v := range m {
		c[k] = cloneJSONValue(v)
	}
	return c
}

func cloneJSONValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return x
		}
		c := make(map[string]any, len(x))
		for k, e := range x {
			c[k] = cloneJSONValue(e)
		}
		return c
	case Model:
		return cloneModel(x)
	case []any:
		if x == nil {
			return x
		}
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = cloneJSONValue(e)
		}
		return c
	}
	return v
}

// clone returns a copy of *p that shares no memory with it, nil for nil.
func (p *ProxyLocation) clone() *ProxyLocation {
	if p == nil {
		return nil
	}
	c := *p
	c.Raw = slices.Clone(p.Raw)
	return &c
}
