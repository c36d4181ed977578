package agent

// Reading a planning answer: the model's thought, its actions and the data
// it gave, leniently, since models name things their own way.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/abctl/abctl/localrun/engine/page"
)

// plan is a planning answer.
type plan struct {
	Thought string          `json:"thought"`
	Actions []planAction    `json:"actions"`
	Data    json.RawMessage `json:"data"`
}

type planAction struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Text string `json:"text"`
}

// UnmarshalJSON reads an action leniently: the id or text as a number,
// and the names some models use for the fields.
func (a *planAction) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	str := func(keys ...string) string {
		for _, k := range keys {
			raw, ok := m[k]
			if !ok {
				continue
			}
			var s string
			if json.Unmarshal(raw, &s) == nil {
				return s
			}
			if raw := strings.TrimSpace(string(raw)); raw != "null" {
				return raw
			}
		}
		return ""
	}
	a.Type = normalizeActionType(str("type", "action", "action_type", "name"))
	a.ID = page.CleanID(str("id", "element_id", "element", "target"))
	a.Text = str("text", "value", "url", "key", "option", "reason", "direction", "seconds")
	return nil
}

// normalizeActionType maps the names models use to the engine's.
func normalizeActionType(t string) string {
	t = strings.ToLower(strings.TrimSpace(t))
	t = strings.NewReplacer("-", "_", " ", "_").Replace(t)
	switch t {
	case "click_element", "tap", "press", "check":
		return "click"
	case "type", "fill", "input", "type_text", "enter_text", "input_text":
		return "input_text"
	case "select", "choose", "select_option":
		return "select_option"
	case "upload", "upload_file":
		return "upload_file"
	case "key", "keypress", "press_key", "send_keys":
		return "press_key"
	case "goto", "navigate", "open_url", "goto_url", "go_to_url":
		return "goto_url"
	case "back", "go_back", "navigate_back":
		return "go_back"
	case "done", "finish", "complete", "completed", "success":
		return "complete"
	case "fail", "abort", "stop", "terminate", "give_up":
		return "terminate"
	case "sleep", "wait":
		return "wait"
	case "answer_prompt", "answer_dialog", "dialog", "prompt":
		return "answer_dialog"
	}
	return t
}

// parsePlan reads a planning answer: an object with actions, or a bare
// list of actions, or one action.
func parsePlan(raw json.RawMessage) (*plan, error) {
	var p plan
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	switch {
	case len(raw) == 0:
		return nil, errors.New("the answer is empty")
	case raw[0] == '[':
		if err := json.Unmarshal(raw, &p.Actions); err != nil {
			return nil, fmt.Errorf("the answer is not a list of actions: %v", err)
		}
	case raw[0] == '{':
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(raw, &probe); err != nil {
			return nil, fmt.Errorf("the answer is not a JSON object: %v", err)
		}
		if _, ok := probe["actions"]; ok {
			if err := json.Unmarshal(raw, &p); err != nil {
				return nil, fmt.Errorf("the answer does not have the expected fields: %v", err)
			}
		} else if one, ok := probe["action"]; ok {
			var a planAction
			if err := json.Unmarshal(one, &a); err != nil {
				var list []planAction
				if json.Unmarshal(one, &list) != nil {
					return nil, fmt.Errorf("the answer's action is not an object: %v", err)
				}
				p.Actions = list
			} else {
				p.Actions = []planAction{a}
			}
			if t, ok := probe["thought"]; ok {
				json.Unmarshal(t, &p.Thought)
			}
			p.Data = probe["data"]
		} else if _, ok := probe["type"]; ok {
			var a planAction
			if err := json.Unmarshal(raw, &a); err != nil {
				return nil, err
			}
			p.Actions = []planAction{a}
		} else {
			return nil, errors.New(`the answer has no "actions"`)
		}
	default:
		return nil, errors.New("the answer is not a JSON object")
	}
	if len(p.Actions) == 0 {
		return nil, errors.New("the answer has no action")
	}
	if string(p.Data) == "null" {
		p.Data = nil
	}
	return &p, nil
}
