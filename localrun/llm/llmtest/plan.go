package llmtest

import "fmt"

// Action is one browser action of a scripted planning answer. Its element,
// when it has one, is named by its text or label, never by id: ids are
// issued by the engine at each observation, names are what a test knows.
type Action struct {
	Type    string // click, input_text, select_option, press_key, complete...
	Element string // the element's name, found with Request.ElementID; "" for none
	Text    string // the action's text, "" for none
}

// Click, Type, Choose and Key are the common actions.
func Click(element string) Action { return Action{Type: "click", Element: element} }
func Type(element, text string) Action {
	return Action{Type: "input_text", Element: element, Text: text}
}
func Choose(element, label string) Action {
	return Action{Type: "select_option", Element: element, Text: label}
}
func Key(key string) Action { return Action{Type: "press_key", Text: key} }

// PlanAnswer is the answer to the planning call r: the thought, the
// actions with their elements' ids found in the page r shows, and data
// when it is not nil.
func PlanAnswer(r *Request, thought string, data any, acts ...Action) (Reply, error) {
	list := make([]map[string]string, 0, len(acts))
	for _, a := range acts {
		m := map[string]string{"type": a.Type}
		if a.Element != "" {
			id, err := r.ElementID(a.Element)
			if err != nil {
				return Reply{}, fmt.Errorf("%s %q: %w", a.Type, a.Element, err)
			}
			m["id"] = id
		}
		if a.Text != "" {
			m["text"] = a.Text
		}
		list = append(list, m)
	}
	ans := map[string]any{"thought": thought, "actions": list}
	if data != nil {
		ans["data"] = data
	}
	return JSON(ans), nil
}

// Plan answers a planning call with PlanAnswer.
func Plan(thought string, data any, acts ...Action) Reply {
	return Func(func(r *Request) (Reply, error) { return PlanAnswer(r, thought, data, acts...) })
}
