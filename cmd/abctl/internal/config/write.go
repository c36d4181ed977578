package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// Changes to the file are made on its parsed document, so that a user's
// comments, key order and formatting survive `abctl config` commands.

// SetCurrentProfile makes name the profile used when neither --profile nor
// ABCTL_PROFILE says otherwise.
func (f *File) SetCurrentProfile(name string) {
	f.CurrentProfile = name
	setScalar(f.root(), "current_profile", name)
}

// SetProfile creates or replaces the named profile.
func (f *File) SetProfile(name string, p Profile) error {
	if err := ValidateProfileName(name); err != nil {
		return err
	}
	if f.Profiles == nil {
		f.Profiles = map[string]Profile{}
	}
	f.Profiles[name] = p
	var value yaml.Node
	if err := value.Encode(p); err != nil {
		return err
	}
	profiles := mapping(f.root(), "profiles")
	if old := get(profiles, name); old != nil {
		// Keep the comments attached to the old profile's keys.
		value.HeadComment, value.LineComment = old.HeadComment, old.LineComment
	}
	set(profiles, name, &value)
	return nil
}

// DeleteProfile removes the named profile; it reports whether it existed.
// When it was the current profile, the current profile is unset.
func (f *File) DeleteProfile(name string) bool {
	if _, ok := f.Profiles[name]; !ok {
		return false
	}
	delete(f.Profiles, name)
	del(mapping(f.root(), "profiles"), name)
	if f.CurrentProfile == name {
		f.CurrentProfile = ""
		del(f.root(), "current_profile")
	}
	return true
}

// Save writes the file (mode 0600, since a profile may hold a key),
// creating its directory.
func (f *File) Save() error {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(f.docNode()); err != nil {
		return fmt.Errorf("write the configuration: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
		return fmt.Errorf("write the configuration: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.path), ".config-*.yaml")
	if err != nil {
		return fmt.Errorf("write the configuration: %w", err)
	}
	_, err = tmp.Write(buf.Bytes())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o600)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), f.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write the configuration %s: %w", f.path, err)
	}
	return nil
}

func (f *File) docNode() *yaml.Node {
	if f.doc == nil {
		f.doc = &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	return f.doc
}

// root is the document's top-level mapping.
func (f *File) root() *yaml.Node {
	doc := f.docNode()
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		doc.Content = []*yaml.Node{{Kind: yaml.MappingNode}}
	}
	return doc.Content[0]
}

// get returns the value of key in the mapping m, or nil.
func get(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// set puts value under key in the mapping m, in place when key exists.
func set(m *yaml.Node, key string, value *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = value
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, value)
}

func setScalar(m *yaml.Node, key, value string) {
	if old := get(m, key); old != nil && old.Kind == yaml.ScalarNode {
		old.Value, old.Tag, old.Style = value, "!!str", 0
		return
	}
	set(m, key, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value})
}

// mapping returns the mapping under key in m, making it when absent.
func mapping(m *yaml.Node, key string) *yaml.Node {
	if v := get(m, key); v != nil && v.Kind == yaml.MappingNode {
		return v
	}
	v := &yaml.Node{Kind: yaml.MappingNode}
	set(m, key, v)
	return v
}

func del(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}
