package script

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Validate checks what the YAML types cannot: the format, the labels, the
// actions and their locators and values, the extraction's fields. The
// error names the first problem's place and says what is wrong.
func (s *Script) Validate() error {
	if s.Format != Format {
		return fmt.Errorf("format: is %q; want %s", s.Format, Format)
	}
	seen := map[string]bool{}
	for i, b := range s.Blocks {
		at := fmt.Sprintf("blocks[%d]", i)
		if strings.TrimSpace(b.Label) == "" {
			return fmt.Errorf("%s.label: missing; a block is named by its label in the agent", at)
		}
		if seen[b.Label] {
			return fmt.Errorf("%s.label: %q appears twice; a script records a block once", at, b.Label)
		}
		seen[b.Label] = true
		if err := b.validate(); err != nil {
			return fmt.Errorf("%s (%s)%w", at, b.Label, err)
		}
	}
	return nil
}

// pathErr is a problem at a place below a block, the place first in its
// message (".steps[0].action: ..."); the callers above prefix theirs.
func pathErr(format string, args ...any) error { return fmt.Errorf(format, args...) }

func (b *Block) validate() error {
	switch b.Mode {
	case ModeReplay:
	case ModeModel:
		if strings.TrimSpace(b.Reason) == "" {
			return pathErr(".reason: missing; say why the block calls the model")
		}
	case "":
		return pathErr(".mode: missing; %s or %s", ModeReplay, ModeModel)
	default:
		return pathErr(".mode: %q is not a mode; %s or %s", b.Mode, ModeReplay, ModeModel)
	}
	for i, st := range b.Steps {
		if err := st.validate(); err != nil {
			return fmt.Errorf(".steps[%d]%w", i, err)
		}
	}
	if b.Extract != nil {
		if err := b.Extract.validate(); err != nil {
			return fmt.Errorf(".extract%w", err)
		}
	}
	return nil
}

func (st *Step) validate() error {
	if !slices.Contains(Actions, st.Action) {
		if st.Action == "" {
			return pathErr(".action: missing; one of %s", strings.Join(Actions, ", "))
		}
		return pathErr(".action: %q cannot be replayed; one of %s", st.Action, strings.Join(Actions, ", "))
	}
	if NeedsElement(st.Action) && len(st.Locators) == 0 {
		return pathErr(".locators: %s acts on an element, and no locator says which", st.Action)
	}
	if slices.Contains(valueActions, st.Action) && strings.TrimSpace(st.Value) == "" {
		return pathErr(".value: missing; %s needs one", st.Action)
	}
	for i, l := range st.Locators {
		if err := l.validate(); err != nil {
			return fmt.Errorf(".locators[%d]%w", i, err)
		}
	}
	for name, p := range map[string]*Page{"before": st.Before, "after": st.After} {
		if p != nil && !strings.HasPrefix(p.URL, "/") && !strings.HasPrefix(p.URL, "{{") {
			return pathErr(".%s.url: %q is not a path; write the path of the page's address, starting with /", name, p.URL)
		}
	}
	return nil
}

func (l *Locator) validate() error {
	if !slices.Contains(LocatorKinds, l.By) {
		if l.By == "" {
			return pathErr(".by: missing; one of %s", strings.Join(LocatorKinds, ", "))
		}
		return pathErr(".by: %q is not a kind of locator; one of %s", l.By, strings.Join(LocatorKinds, ", "))
	}
	if strings.TrimSpace(l.Value) == "" {
		return pathErr(".value: missing")
	}
	if l.By == ByRole && strings.TrimSpace(l.Role) == "" {
		return pathErr(".role: missing; a role locator names the role (button, link, textbox, ...)")
	}
	if l.By == ByTestID && l.Attr != "" && !strings.HasPrefix(l.Attr, "data-") {
		return pathErr(".attr: %q is not a data- attribute", l.Attr)
	}
	return nil
}

func (e *Extract) validate() error {
	seen := map[string]bool{}
	for i, f := range e.Fields {
		at := fmt.Sprintf(".fields[%d]", i)
		if _, err := ParsePath(f.Path); err != nil {
			return fmt.Errorf("%s.path: %w", at, err)
		}
		if seen[f.Path] {
			return fmt.Errorf("%s.path: %s appears twice", at, f.Path)
		}
		seen[f.Path] = true
		if !slices.Contains(FieldTypes, f.Type) {
			return fmt.Errorf("%s.type: %q is not a field type; one of %s", at, f.Type, strings.Join(FieldTypes, ", "))
		}
		switch {
		case f.CSS != "" && f.Value != nil:
			return fmt.Errorf("%s: has both css and value; a field is read from the page or given", at)
		case f.CSS != "" && f.Type != TypeString && f.Type != TypeNumber && f.Type != TypeInteger:
			return fmt.Errorf("%s.css: a %s field cannot be read from the page's text; give its value", at, f.Type)
		case f.CSS == "" && f.Value == nil && f.Type != TypeNull && f.Type != TypeArray && f.Type != TypeObject:
			return fmt.Errorf("%s: has neither css nor value; say where the field is read or what it is", at)
		}
	}
	return nil
}

// errNotPath is the root of path errors.
var errNotPath = errors.New("not a path")
