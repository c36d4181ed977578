// Package definition turns an agent definition as the API receives it
// into the shape in which the hosted service stores and returns it, which
// is the shape the daemon stores a version in and answers (the store keeps
// what it is given).
//
// The request shape is what clients send: parameters as {key, type, ...}
// and blocks naming the parameters they read by key. The response shape is
// what the hosted service returns for an agent version:
//
//   - every parameter is a full record: the id field of its type
//     (workflow_parameter_id wp_..., credential_parameter_id cp_..., ...),
//     workflow_id and timestamps. A context parameter has none of these (the
//     service does not store it as a record); it carries the record of its
//     source instead of source_parameter_key;
//   - every block, loop_blocks included, has an "output" parameter keyed
//     <label>_output, described "Output parameter for block <label>", which
//     is added to the parameters after the ones sent and set as the block's
//     output_parameter;
//   - a block's parameter_keys become parameters, the records they name;
//     likewise a for_loop's loop_over_parameter_key becomes loop_over and a
//     send_email block's smtp_*_secret_parameter_key fields its smtp_*
//     records;
//   - the task-like blocks carry task_type and include_extracted_text;
//   - a definition without a version gets 1, or 2 when it routes (a
//     conditional block or a next_block_label).
//
// client.Agent.Definition turns this back into the request shape.
//
// Ids are new in every version, as the service makes a new workflow with
// new parameter rows for each. A definition that is already response-shaped
// (a fetched agent sent back) is read the same way: its output parameters
// take the place of the ones that would be added, a block's parameters
// stand for its parameter_keys, and every id and timestamp is replaced.
//
// A reference that names no parameter (the service rejects those, and so
// does the daemon's validation, client.AgentDefinition.Validate, before a
// definition gets here) is kept as sent, in the request shape: such a
// block keeps its parameter_keys and has no parameters. A block's
// parameters that do not all name parameters of the definition are not a
// fetched agent's records: they are dropped, as the service ignores a
// block's parameters in a definition.
package definition

import (
	"encoding/json"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/internal/jsonobject"
)

// NewVersion makes a the content of a new agent version: it gives it a new
// workflow_id (w_...) and now as its created_at and modified_at, and turns
// its definition into the response shape (Expand), whose records carry
// them. The store takes a version's workflow_id and created_at as given.
func NewVersion(a *client.Agent, gen *ids.Generator, now client.Time) {
	a.WorkflowID = gen.Next(ids.PrefixAgentVersion)
	a.CreatedAt, a.ModifiedAt = now, now
	Expand(a, gen)
}

// parameterIDs gives, per parameter type, the id prefix and the field that
// holds the record's id. Output parameters are made apart; context
// parameters have no record; azure_secret, a type that exists only in
// responses, has no id the daemon can make.
var parameterIDs = map[client.ParameterType]struct {
	prefix string
	field  func(*client.Parameter) *string
}{
	client.ParameterTypeWorkflow: {ids.PrefixWorkflowParameter,
		func(p *client.Parameter) *string { return &p.WorkflowParameterID }},
	client.ParameterTypeOutput: {ids.PrefixOutputParameter,
		func(p *client.Parameter) *string { return &p.OutputParameterID }},
	client.ParameterTypeAWSSecret: {ids.PrefixAWSSecretParameter,
		func(p *client.Parameter) *string { return &p.AWSSecretParameterID }},
	client.ParameterTypeCredential: {ids.PrefixCredentialParameter,
		func(p *client.Parameter) *string { return &p.CredentialParameterID }},
	client.ParameterTypeOnePassword: {ids.PrefixOnePasswordCredentialParameter,
		func(p *client.Parameter) *string { return &p.OnePasswordCredentialParameterID }},
	client.ParameterTypeAzureVaultCredential: {ids.PrefixAzureVaultCredentialParameter,
		func(p *client.Parameter) *string { return &p.AzureVaultCredentialParameterID }},
	client.ParameterTypeBitwardenLoginCredential: {ids.PrefixBitwardenLoginCredentialParameter,
		func(p *client.Parameter) *string { return &p.BitwardenLoginCredentialParameterID }},
	client.ParameterTypeBitwardenSensitiveInformation: {ids.PrefixBitwardenSensitiveInformationParameter,
		func(p *client.Parameter) *string { return &p.BitwardenSensitiveInformationParameterID }},
	client.ParameterTypeBitwardenCreditCardData: {ids.PrefixBitwardenCreditCardDataParameter,
		func(p *client.Parameter) *string { return &p.BitwardenCreditCardDataParameterID }},
}

// expander holds what Expand builds for one version row.
type expander struct {
	ids        *ids.Generator
	workflowID string
	now        client.Time
	// records are the parameters by key (the first of a key wins), for
	// resolving references. They point into the definition's parameters.
	records map[string]*client.Parameter
}

// Expand turns a.WorkflowDefinition into its response shape (see the
// package comment), with new ids from gen, in place. Its records carry
// a.WorkflowID and a.CreatedAt, which must be set (NewVersion sets them).
func Expand(a *client.Agent, gen *ids.Generator) {
	e := &expander{ids: gen, workflowID: a.WorkflowID, now: a.CreatedAt, records: map[string]*client.Parameter{}}
	wd := &a.WorkflowDefinition

	// The output parameters of the blocks, in block order, a loop before
	// its blocks; blocks with the same label share one.
	outputs := map[string]client.Parameter{}
	var outputKeys []string
	wd.Blocks.Walk(func(b client.Block) {
		label := b.Base().Label
		key := label + "_output"
		if _, ok := outputs[key]; !ok {
			outputs[key] = e.outputRecord(key, "Output parameter for block "+label)
			outputKeys = append(outputKeys, key)
		}
	})

	params := make([]client.Parameter, 0, len(wd.Parameters)+len(outputKeys))
	placed := map[string]bool{} // output parameters already in params
	for _, p := range wd.Parameters {
		if out, ok := outputs[p.Key]; ok {
			// Sent back from a response (or a parameter under a key that
			// is reserved for a block's output): the block's output
			// parameter takes its place, once.
			if !placed[p.Key] {
				params = append(params, out)
				placed[p.Key] = true
			}
			continue
		}
		switch p.ParameterType {
		case client.ParameterTypeOutput:
			// An output parameter of no block: kept, as a new record.
			params = append(params, e.outputRecord(p.Key, p.Description))
		case client.ParameterTypeContext:
			params = append(params, p) // resolved below, once all records exist
		default:
			params = append(params, e.record(p))
		}
	}
	for _, key := range outputKeys {
		if !placed[key] {
			params = append(params, outputs[key])
		}
	}
	wd.Parameters = params

	for i := range params {
		if p := &params[i]; p.ParameterType != client.ParameterTypeContext {
			e.add(p)
		}
	}
	// Context parameters, in order: each may read any record or an earlier
	// context parameter.
	for i := range params {
		if p := &params[i]; p.ParameterType == client.ParameterTypeContext {
			e.context(p)
			e.add(p)
		}
	}

	wd.Blocks = e.blocks(wd.Blocks)

	if wd.Version == nil {
		v := 1
		if routes(wd.Blocks) {
			v = 2
		}
		wd.Version = &v
	}
}

func (e *expander) add(p *client.Parameter) {
	if _, ok := e.records[p.Key]; !ok {
		e.records[p.Key] = p
	}
}

// outputRecord returns a new output parameter record.
func (e *expander) outputRecord(key, description string) client.Parameter {
	return client.Parameter{
		ParameterType:     client.ParameterTypeOutput,
		Key:               key,
		Description:       description,
		OutputParameterID: e.ids.Next(ids.PrefixOutputParameter),
		WorkflowID:        e.workflowID,
		CreatedAt:         e.now,
		ModifiedAt:        e.now,
	}
}

// record returns p (neither an output nor a context parameter) as a new
// record: its fields as sent, whatever response-only fields it came with
// replaced.
func (e *expander) record(p client.Parameter) client.Parameter {
	clearResponseFields(&p)
	if t, ok := parameterIDs[p.ParameterType]; ok {
		*t.field(&p) = e.ids.Next(t.prefix)
	}
	p.WorkflowID = e.workflowID
	p.CreatedAt, p.ModifiedAt, p.DeletedAt = e.now, e.now, nil
	return p
}

// context turns a context parameter into its response shape: the record of
// its source instead of the source's key, or the key as sent when it names
// no parameter.
func (e *expander) context(p *client.Parameter) {
	key := p.SourceParameterKey
	if key == "" && p.Source != nil {
		key = p.Source.Key
	}
	clearResponseFields(p)
	p.WorkflowID, p.CreatedAt, p.ModifiedAt, p.DeletedAt = "", client.Time{}, client.Time{}, nil
	if src, ok := e.records[key]; ok && key != p.Key {
		c := src.Clone()
		p.Source = &c
		p.SourceParameterKey = ""
	} else {
		p.SourceParameterKey = key
	}
}

// clearResponseFields empties the fields a parameter gets from the store.
func clearResponseFields(p *client.Parameter) {
	for _, t := range parameterIDs {
		*t.field(p) = ""
	}
	p.AzureSecretParameterID = ""
	p.Source, p.Value = nil, nil
}

// resolve returns copies of the records the keys name, in order; ok is
// false when a key names no parameter.
func (e *expander) resolve(keys []string) (recs []client.Parameter, ok bool) {
	for _, k := range keys {
		r, found := e.records[k]
		if !found {
			return nil, false
		}
		recs = append(recs, r.Clone())
	}
	return recs, true
}

// one resolves a single reference held as a key or, response-shaped, as a
// record: it sets *rec to the record and clears *key, or, when the key
// names no parameter, sets *key and clears *rec.
func (e *expander) one(key *string, rec **client.Parameter) {
	k := *key
	if k == "" && *rec != nil {
		k = (*rec).Key
	}
	*rec = nil
	if k == "" {
		return
	}
	if r, ok := e.records[k]; ok {
		c := r.Clone()
		*rec, *key = &c, ""
		return
	}
	*key = k
}

func (e *expander) blocks(bs client.Blocks) client.Blocks {
	for i, b := range bs {
		bs[i] = e.block(b)
	}
	return bs
}

// block turns one block into its response shape, in place where it can.
func (e *expander) block(b client.Block) client.Block {
	if client.IsNilBlock(b) {
		return b
	}
	if u, ok := b.(*client.UnknownBlock); ok {
		return e.unknown(u)
	}
	base := b.Base()
	if out, ok := e.records[base.Label+"_output"]; ok {
		c := out.Clone()
		base.OutputParameter = &c
	}
	if keys := client.BlockParameterKeys(b); keys != nil {
		names, fromRecords := *keys, false
		if len(names) == 0 {
			names, fromRecords = client.ParameterKeys(base.Parameters), true
		}
		recs, ok := e.resolve(names)
		switch {
		case ok:
			base.Parameters, *keys = recs, nil
		case fromRecords:
			// parameters that are not the records of this definition's
			// parameters are not a fetched agent sent back: the service
			// ignores a block's parameters in a definition, and so does
			// the daemon (made into parameter_keys, they would fail the
			// run on a name that is not defined).
			base.Parameters, *keys = nil, nil
		default:
			base.Parameters, *keys = nil, names
		}
	} else {
		base.Parameters = nil // a block type without parameters
	}

	general, included := "general", true
	switch x := b.(type) {
	case *client.TaskBlock:
		x.TaskType, x.IncludeExtractedText = general, &included
	case *client.NavigationBlock:
		x.TaskType, x.IncludeExtractedText = general, &included
	case *client.ExtractionBlock:
		x.TaskType, x.IncludeExtractedText = general, new(bool)
	case *client.ValidationBlock:
		x.TaskType, x.IncludeExtractedText = "validation", &included
	case *client.ActionBlock:
		x.TaskType, x.IncludeExtractedText = "action", &included
	case *client.LoginBlock:
		x.TaskType, x.IncludeExtractedText = general, &included
	case *client.FileDownloadBlock:
		x.TaskType, x.IncludeExtractedText = general, &included
	case *client.ForLoopBlock:
		e.one(&x.LoopOverParameterKey, &x.LoopOver)
		x.LoopBlocks = e.blocks(x.LoopBlocks)
	case *client.WhileLoopBlock:
		x.LoopBlocks = e.blocks(x.LoopBlocks)
	case *client.SendEmailBlock:
		e.one(&x.SMTPHostSecretParameterKey, &x.SMTPHost)
		e.one(&x.SMTPPortSecretParameterKey, &x.SMTPPort)
		e.one(&x.SMTPUsernameSecretParameterKey, &x.SMTPUsername)
		e.one(&x.SMTPPasswordSecretParameterKey, &x.SMTPPassword)
	}
	return b
}

// unknown does for a block of a type the client does not know what block
// does for the others, on its JSON object: output_parameter is set, and
// parameter_keys (or parameters holding records) become parameters;
// records that do not all name parameters of the definition are dropped.
// Other members keep their values and order. A Raw that is not a JSON object is
// left alone.
func (e *expander) unknown(u *client.UnknownBlock) client.Block {
	members, err := jsonobject.Split(u.Raw)
	if err != nil {
		return u
	}
	// parameter_keys, when it lists any, else the keys of parameters,
	// when it holds records.
	var names []string
	var records []client.Parameter
	keysAt, recordsAt, hasKeys := -1, -1, false
	for i, m := range members {
		switch m.Key {
		case "parameter_keys":
			var ks []string
			if json.Unmarshal(m.Value, &ks) == nil {
				keysAt = i
				if len(ks) > 0 {
					names, hasKeys = ks, true
				}
			}
		case "parameters":
			if ps, ok := client.ParameterRecords(m.Value); ok {
				records, recordsAt = ps, i
			}
		}
	}
	if len(names) == 0 && recordsAt >= 0 {
		names = client.ParameterKeys(records)
	}
	recs, resolved := e.resolve(names)
	out := make([]jsonobject.Member, 0, len(members)+2)
	for i, m := range members {
		if m.Key == "output_parameter" || i == keysAt || i == recordsAt {
			continue
		}
		out = append(out, m)
	}
	switch {
	case len(names) == 0:
	case resolved:
		v, _ := json.Marshal(recs)
		out = append(out, jsonobject.Member{Key: "parameters", Value: v})
	case !hasKeys:
		// Records that name no parameter of the definition: ignored, as
		// for a known block type.
	default:
		v, _ := json.Marshal(names)
		out = append(out, jsonobject.Member{Key: "parameter_keys", Value: v})
	}
	if rec, ok := e.records[u.Base().Label+"_output"]; ok {
		v, _ := json.Marshal(rec)
		out = append(out, jsonobject.Member{Key: "output_parameter", Value: v})
	}
	obj := jsonobject.Join(out)
	list := make([]byte, 0, len(obj)+2)
	list = append(append(append(list, '['), obj...), ']')
	// Decoding again keeps the block's view of its common fields in step
	// with Raw.
	var bs client.Blocks
	if json.Unmarshal(list, &bs) != nil || len(bs) != 1 {
		return u
	}
	return bs[0]
}

// routes reports whether the blocks use version-2 routing: a conditional
// block or a next_block_label.
func routes(bs client.Blocks) bool {
	found := false
	bs.Walk(func(b client.Block) {
		found = found || b.BlockType() == client.BlockTypeConditional || b.Base().NextBlockLabel != ""
	})
	return found
}
