package agentfile

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/abctl/abctl/client"
)

// Render writes an agent file ("yaml" or "json") for an agent fetched from
// the service: name and tags first when given, then the agent's id when its
// id is not the one the name maps to (an agent made elsewhere, adopted by
// the file), then the normalized definition. Loading the file back gives a definition that normalizes to
// NormalizeAgent(a), so applying it changes nothing. (A block of a type
// this package does not know, from a newer service, is written as it is;
// such a file loads with a warning, and the block is sent back as
// written.)
func Render(a *client.Agent, name string, tags map[string]string, format string) ([]byte, error) {
	return render(a, name, tags, format, true)
}

// RenderDefinition writes the normalized definition of a fetched agent
// alone ("yaml" or "json"), without the keys that belong to abctl (name,
// tags, id): the form the service itself takes as yaml_definition or
// json_definition.
func RenderDefinition(a *client.Agent, format string) ([]byte, error) {
	return render(a, "", nil, format, false)
}

func render(a *client.Agent, name string, tags map[string]string, format string, withID bool) ([]byte, error) {
	if a == nil {
		return nil, errors.New("agentfile: Render of a nil agent")
	}
	if name != "" && !ValidName(name) {
		return nil, fmt.Errorf("agentfile: Render: name %q is not valid: use %s", name, nameRule)
	}
	def, err := normalizedTree(a.Definition())
	if err != nil {
		return nil, err
	}
	file := &jvalue{kind: 'o'}
	if name != "" {
		file.keys = append(file.keys, "name")
		file.vals = append(file.vals, &jvalue{kind: 's', s: name})
	}
	if id := a.WorkflowPermanentID; withID && id != "" && (name == "" || AgentID(a.OrganizationID, name) != id) {
		file.keys = append(file.keys, "id")
		file.vals = append(file.vals, &jvalue{kind: 's', s: id})
	}
	if len(tags) > 0 {
		t := &jvalue{kind: 'o'}
		for k, v := range tags {
			t.keys = append(t.keys, k)
			t.vals = append(t.vals, &jvalue{kind: 's', s: v})
		}
		file.keys = append(file.keys, "tags")
		file.vals = append(file.vals, sortKeys(t))
	}
	file.keys = append(file.keys, def.keys...)
	file.vals = append(file.vals, def.vals...)

	switch strings.ToLower(format) {
	case "yaml", "yml", "":
		return encodeYAML(file)
	case "json":
		var buf bytes.Buffer
		writeJSON(&buf, file, "  ")
		return buf.Bytes(), nil
	}
	return nil, fmt.Errorf("agentfile: Render: unknown format %q (use yaml or json)", format)
}
