package agentfile

import "github.com/abctl/abctl/client"

// NameTag is the tag key under which abctl keeps the name an agent was
// applied under: the agent file of a fetched agent takes its name from it.
const NameTag = "abctl.name"

// LeftOutTag is a tag of an agent that its agent file does not carry, and
// why, for a person to be told: a label (files hold key: value tags only),
// or a key or value a file cannot hold.
type LeftOutTag struct {
	Tag client.TagItem
	Why string
}

// FileTags reads the tags of a fetched agent (as BatchGetTags answers them)
// the way its agent file holds them: the name it was applied under (its
// abctl.name tag, "" for none), the key: value tags the file carries, and
// the tags the file leaves out that a person should hear of. The tags that
// belong to the service or to abctl (abctl.name among them) stay out
// silently.
func FileTags(items []client.TagItem) (name string, tags map[string]string, left []LeftOutTag) {
	for _, t := range items {
		switch {
		case t.Key == nil:
			left = append(left, LeftOutTag{Tag: t, Why: "agent files hold key: value tags only"})
		case *t.Key == NameTag:
			name = t.Value
		case ReservedTagKey(*t.Key):
		case TagProblem(*t.Key, t.Value) != "":
			left = append(left, LeftOutTag{Tag: t, Why: TagProblem(*t.Key, t.Value)})
		default:
			if tags == nil {
				tags = map[string]string{}
			}
			tags[*t.Key] = t.Value
		}
	}
	return name, tags, left
}

// RenderTagged writes the agent file of a fetched agent with the tags the
// service holds for it, in format ("yaml" or "json"): its name and tags as
// FileTags reads them, then Render's id and definition. It is what
// `abctl get agent NAME -o yaml` writes, and what the daemon's web page
// shows. The tags the file leaves out are returned for a person to be told.
func RenderTagged(a *client.Agent, items []client.TagItem, format string) ([]byte, []LeftOutTag, error) {
	name, tags, left := FileTags(items)
	doc, err := Render(a, name, tags, format)
	return doc, left, err
}
