// Package script is abctl's format for a recorded agent run that replays
// without a language model: the actions that reached each block's goal,
// with the elements they acted on described by several independent
// locators, the values typed (parameter references kept as references,
// credentials as the placeholders the model saw), the pages expected
// before and after each action, and where on the page each field of an
// extraction was read.
//
// A script is one YAML file, script.yaml (FileName), whose first key is
// format: abctl.script/v1 (Format). docs/scripts.md describes it for
// users. The engine records scripts (package engine/agent and
// engine/blocks) and replays them; the daemon stores a version per change
// (package daemon/store); the CLI edits and deploys them. This package only
// reads, checks and writes the format: it depends on nothing of abctl.
//
// The hosted service's scripts are Python programs that drive its own
// browser library; they cannot run here. ParseFiles refuses them, and any
// file that is not an abctl script, with an error wrapping ErrForeign that
// says so.
package script

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Format is the value of the format key of every abctl script.
const Format = "abctl.script/v1"

// FileName is the name of a script's only file.
const FileName = "script.yaml"

// DefaultCacheKey is the cache key of a script that names none, as of an
// agent that sets none.
const DefaultCacheKey = "default"

// Block modes.
const (
	// ModeReplay is a block whose recorded actions replay without a model.
	ModeReplay = "replay"
	// ModeModel is a block that calls the model every time, for the
	// reason its Reason gives (a step judged by the model, a tab switch,
	// a page that differs every time).
	ModeModel = "model"
)

// ErrForeign is wrapped by the errors of files that are not abctl
// scripts (the hosted service's Python scripts, other formats).
var ErrForeign = errors.New("not an abctl script")

// Script is a recorded path through an agent: the blocks the model drove,
// in the order they ran.
type Script struct {
	// Format is always Format.
	Format string `yaml:"format" json:"format"`
	// Agent is the workflow_permanent_id of the agent it was recorded
	// from ("" for a script written by hand for no agent).
	Agent string `yaml:"agent,omitempty" json:"agent,omitempty"`
	// CacheKey is the agent's cache key, rendered, that selects this
	// script among the agent's; Parse makes an absent one
	// DefaultCacheKey.
	CacheKey string `yaml:"cache_key,omitempty" json:"cache_key,omitempty"`
	// Blocks are the model-driven blocks, by label. A block of the agent
	// that is not here runs as it always does (model-free blocks) or with
	// the model (a model-driven block the recording did not reach).
	Blocks []Block `yaml:"blocks" json:"blocks"`
}

// Block is what one block of the agent did.
type Block struct {
	// Label is the block's label in the agent.
	Label string `yaml:"label" json:"label"`
	// Mode is ModeReplay or ModeModel.
	Mode string `yaml:"mode" json:"mode"`
	// Reason says why a ModeModel block cannot replay.
	Reason string `yaml:"reason,omitempty" json:"reason,omitempty"`
	// Steps are the actions, in order.
	Steps []Step `yaml:"steps,omitempty" json:"steps,omitempty"`
	// Extract says where the block's extracted data was read on the page;
	// nil for a block that extracts nothing.
	Extract *Extract `yaml:"extract,omitempty" json:"extract,omitempty"`
}

// Step is one action.
type Step struct {
	// Action is one of Actions.
	Action string `yaml:"action" json:"action"`
	// Element is the element as the model saw it, for people reading the
	// script; replay does not use it.
	Element string `yaml:"element,omitempty" json:"element,omitempty"`
	// Locators find the element, tried in order; the first that finds an
	// element wins. Actions on an element need at least one.
	Locators []Locator `yaml:"locators,omitempty" json:"locators,omitempty"`
	// Value is what the action types, chooses, presses, loads or uploads
	// (the number of seconds of a wait; "up" or "down" for a scroll), as
	// a template: {{ key }} is the run's parameter, <secret:…> a
	// credential's field, revealed only as it is typed.
	Value string `yaml:"value,omitempty" json:"value,omitempty"`
	// Before and After are the pages expected before and after the action.
	Before *Page `yaml:"before,omitempty" json:"before,omitempty"`
	After  *Page `yaml:"after,omitempty" json:"after,omitempty"`
}

// Page is a page a step expects.
type Page struct {
	// URL is the path of the page's address, a template ({{ key }} for
	// parameters); the origin and the query are not compared, so that a
	// script recorded on one host replays on another.
	URL string `yaml:"url" json:"url"`
	// Title is the page's title when recorded, for people reading the
	// script; replay does not compare it.
	Title string `yaml:"title,omitempty" json:"title,omitempty"`
}

// Actions are the action types a script can replay.
var Actions = []string{"click", "input_text", "select_option", "upload_file", "hover",
	"press_key", "scroll", "wait", "goto_url", "go_back", "answer_dialog"}

// elementActions act on an element and need locators.
var elementActions = []string{"click", "input_text", "select_option", "upload_file", "hover"}

// valueActions need a value.
var valueActions = []string{"select_option", "upload_file", "press_key", "goto_url"}

// NeedsElement reports whether the action acts on an element.
func NeedsElement(action string) bool { return slices.Contains(elementActions, action) }

// Parse reads a script file, YAML or JSON, and checks it. Errors name the
// place: a line for what YAML cannot read (an unknown key, a wrong type),
// a path such as blocks[1].steps[0].action for the rest.
func Parse(data []byte) (*Script, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w: the file is empty (an abctl script starts with format: %s)", ErrForeign, Format)
	}
	// The file is read once when it is an abctl script: a large one (a
	// script of several MB) costs the YAML scanner tens of MB of passing
	// buffers per read. Only a file that is not one is read again, to
	// say why (foreign, then strict).
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Script
	if err := dec.Decode(&s); err != nil || s.Format != Format {
		if ferr := foreign(data); ferr != nil {
			return nil, ferr
		}
		if err == nil { // cannot happen: foreign accepts only Format
			return nil, fmt.Errorf("%w: format is %v; this abctl reads %s", ErrForeign, s.Format, Format)
		}
		return nil, fmt.Errorf("%s: %v", FileName, cleanYAMLError(err))
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if strings.TrimSpace(s.CacheKey) == "" {
		s.CacheKey = DefaultCacheKey
	}
	return &s, nil
}

// foreign returns the ErrForeign error of a file that is not an abctl
// script (not YAML, not a mapping, without format or of another format),
// nil for one whose format is Format.
func foreign(data []byte) error {
	var probe struct {
		Format any `yaml:"format"`
	}
	if err := yaml.Unmarshal(data, &probe); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%w: the file is not a YAML mapping of keys (an abctl script starts with format: %s)", ErrForeign, Format)
		}
		return fmt.Errorf("%w: %s is not YAML or JSON: %v", ErrForeign, FileName, cleanYAMLError(err))
	}
	if f, _ := probe.Format.(string); f != Format {
		if probe.Format == nil {
			return fmt.Errorf("%w: it has no format key (an abctl script starts with format: %s)", ErrForeign, Format)
		}
		return fmt.Errorf("%w: format is %v; this abctl reads %s", ErrForeign, probe.Format, Format)
	}
	return nil
}

// File is one file of a script as the API carries it.
type File struct {
	Path    string
	Content []byte
}

// ParseFiles reads a script sent as files (POST /v1/scripts, deploy): it
// must be exactly one file, script.yaml. The hosted service's Python
// scripts and other files are refused with an error wrapping ErrForeign.
func ParseFiles(files []File) (*Script, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: no files; an abctl script is one file, %s", ErrForeign, FileName)
	}
	var names []string
	var found *File
	for i := range files {
		name := strings.TrimPrefix(strings.TrimSpace(files[i].Path), "./")
		names = append(names, name)
		switch {
		case strings.HasSuffix(strings.ToLower(name), ".py"):
			return nil, fmt.Errorf("%w: %s is a Python script, the hosted service's format, which abctl cannot run: "+
				"abctl replays scripts in its own format (one file, %s), recorded from a run with run_with: code (docs/scripts.md)", ErrForeign, name, FileName)
		case name == FileName:
			found = &files[i]
		}
	}
	if found == nil {
		return nil, fmt.Errorf("%w: no %s among the files (%s); an abctl script is that one file", ErrForeign, FileName, strings.Join(names, ", "))
	}
	if len(files) > 1 {
		return nil, fmt.Errorf("an abctl script is one file, %s; remove the others (%s)", FileName, strings.Join(slices.DeleteFunc(names, func(n string) bool { return n == FileName }), ", "))
	}
	return Parse(found.Content)
}

// Marshal writes the script as its file: YAML, keys in a fixed order, so
// that the same recording gives the same bytes.
func (s *Script) Marshal() []byte {
	c := *s
	c.Format = Format
	var b bytes.Buffer
	b.WriteString("# An abctl script: the recorded actions of an agent's blocks, replayed without a\n")
	b.WriteString("# model by runs with run_with: code. Edit it and deploy it with\n")
	b.WriteString("# `abctl scripts deploy SCRIPT_ID script.yaml`; the format is in docs/scripts.md.\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&c); err != nil {
		// The types hold strings, numbers and slices only.
		panic("script: encode: " + err.Error())
	}
	enc.Close()
	return b.Bytes()
}

// Block returns the block of the label, nil when the script has none.
func (s *Script) Block(label string) *Block {
	for i := range s.Blocks {
		if s.Blocks[i].Label == label {
			return &s.Blocks[i]
		}
	}
	return nil
}

// Set replaces the block of b's label, or appends b.
func (s *Script) Set(b Block) {
	if old := s.Block(b.Label); old != nil {
		*old = b
		return
	}
	s.Blocks = append(s.Blocks, b)
}

// BlockSummary says how a block runs.
type BlockSummary struct {
	Label string `json:"label"`
	// Mode is ModeReplay or ModeModel.
	Mode   string `json:"mode"`
	Reason string `json:"reason,omitempty"`
	// Steps counts the recorded actions; Fields the extracted fields read
	// from the page.
	Steps  int `json:"steps"`
	Fields int `json:"fields,omitempty"`
}

// Summary says, block by block, which replay and which call the model.
func (s *Script) Summary() []BlockSummary {
	out := make([]BlockSummary, 0, len(s.Blocks))
	for _, b := range s.Blocks {
		bs := BlockSummary{Label: b.Label, Mode: b.Mode, Reason: b.Reason, Steps: len(b.Steps)}
		if b.Extract != nil {
			bs.Fields = len(b.Extract.Fields)
		}
		out = append(out, bs)
	}
	return out
}

// cleanYAMLError drops the library's prefix and type names from what it
// says.
func cleanYAMLError(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.ReplaceAll(msg, "unmarshal errors:\n  ", "")
	msg = strings.ReplaceAll(msg, "\n  ", "; ")
	for _, t := range []string{"script.Script", "script.Block", "script.Step", "script.Locator", "script.Page", "script.Extract", "script.Field"} {
		msg = strings.ReplaceAll(msg, " in type "+t, "")
	}
	return strings.ReplaceAll(msg, "field ", "key ")
}
