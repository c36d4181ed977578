package agentfile

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Schedule is one entry of an agent file's `schedules:` list: the agent
// runs at the times of Cron, read in Timezone, with Parameters. Applying
// the file makes the agent's schedules exactly the listed ones, matched
// by Name (see package applier).
//
//	schedules:
//	  - name: weekday-morning
//	    cron: "0 9 * * MON-FRI"
//	    timezone: Europe/Berlin
//	    parameters: {month: current}
//	    enabled: true          # default
//	    description: the morning report
type Schedule struct {
	Name        string
	Cron        string
	Timezone    string
	Enabled     bool
	Parameters  map[string]any // nil when none
	Description string
}

// schedules reads the `schedules:` list; ok tells that the key is there
// (an empty list then means "no schedules").
func (w *walker) schedules(n *yaml.Node) (out []Schedule, ok bool) {
	c := ctx{path: "schedules"}
	if n == nil {
		return nil, false
	}
	if n = unalias(n); n == nil || isNull(n) {
		return []Schedule{}, true
	}
	if n.Kind != yaml.SequenceNode {
		w.mismatch(n, c, "a list of schedules (each with name, cron and timezone)")
		return nil, true
	}
	out = []Schedule{}
	seen := map[string]bool{}
	for i, item := range n.Content {
		ic := c.index(i)
		item = unalias(item)
		if item == nil || item.Kind != yaml.MappingNode {
			w.mismatch(item, ic, "a mapping with name, cron and timezone")
			continue
		}
		s := Schedule{Enabled: true}
		var nameNode *yaml.Node
		for _, p := range w.pairs(item, ic) {
			kc := ic.key(p.key.Value)
			v := unalias(p.value)
			text := func() (string, bool) {
				if v == nil || v.Kind != yaml.ScalarNode || isNull(v) {
					w.mismatch(v, kc, "a string")
					return "", false
				}
				return v.Value, true
			}
			switch p.key.Value {
			case "name":
				nameNode = v
				s.Name, _ = text()
			case "cron":
				s.Cron, _ = text()
			case "timezone":
				s.Timezone, _ = text()
			case "description":
				s.Description, _ = text()
			case "enabled":
				if v == nil || v.Kind != yaml.ScalarNode || v.ShortTag() != "!!bool" {
					w.mismatch(v, kc, "true or false")
					continue
				}
				s.Enabled = v.Value == "true"
			case "parameters":
				if isNull(v) {
					continue
				}
				if v.Kind != yaml.MappingNode {
					w.mismatch(v, kc, "a mapping of the agent's parameters to their values")
					continue
				}
				var m map[string]any
				if err := v.Decode(&m); err != nil {
					w.problem(v, kc, "the parameters cannot be read: %v", err)
					continue
				}
				s.Parameters = m
			default:
				w.problem(p.key, kc, "a schedule has no key %q: it takes name, cron, timezone, parameters, enabled and description", p.key.Value)
			}
		}
		switch {
		case strings.TrimSpace(s.Name) == "":
			if nameNode == nil {
				w.problem(item, ic, "a schedule needs a name, which identifies it when the file is applied again")
			}
		case seen[s.Name]:
			w.problem(nameNode, ic.key("name"), "two schedules are named %q; names identify them and must differ", s.Name)
		default:
			seen[s.Name] = true
		}
		if strings.TrimSpace(s.Cron) == "" {
			w.problem(item, ic, "schedule %q needs a cron expression (cron: \"0 9 * * MON-FRI\")", s.Name)
		}
		if strings.TrimSpace(s.Timezone) == "" {
			w.problem(item, ic, "schedule %q needs a timezone (an IANA name such as UTC or Europe/Berlin)", s.Name)
		}
		out = append(out, s)
	}
	return out, true
}

// ScheduleText renders schedules as YAML comment lines, sorted by name, for
// the comparison of a file with the service (abctl diff): equal schedules
// render equal text.
func ScheduleText(list []Schedule) []byte {
	sorted := slices.Clone(list)
	slices.SortFunc(sorted, func(a, b Schedule) int { return strings.Compare(a.Name, b.Name) })
	var b []byte
	for _, s := range sorted {
		state := "enabled"
		if !s.Enabled {
			state = "disabled"
		}
		b = fmt.Appendf(b, "# schedule %s: %q in %s, %s", s.Name, s.Cron, s.Timezone, state)
		if len(s.Parameters) > 0 {
			params, _ := json.Marshal(s.Parameters) // sorted keys
			b = fmt.Appendf(b, ", parameters %s", params)
		}
		if s.Description != "" {
			b = fmt.Appendf(b, ", description %q", s.Description)
		}
		b = append(b, '\n')
	}
	return b
}
