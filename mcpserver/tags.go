package mcpserver

import (
	"context"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/ptr"
)

// Tags are written as text in the tools: "key:value" for a grouped tag
// (one value per key: env:prod) and "label" for a standalone label, the
// grammar of the service's tag filters.

// WorkflowTagsSetInput is the input of skyvern_workflow_tags_set.
type WorkflowTagsSetInput struct {
	WorkflowID string            `json:"workflow_id" jsonschema:"the agent's permanent id (wpid_...)"`
	Tags       []string          `json:"tags" jsonschema:"tags to set: key:value replaces the key's current value, a bare label is added"`
	Colors     map[string]string `json:"colors,omitempty" jsonschema:"colour of new key:value tags, by key: gray, red, orange, amber, yellow, green, teal, blue, cyan, indigo, purple or pink"`
}

// WorkflowTagDeleteInput is the input of skyvern_workflow_tag_delete.
type WorkflowTagDeleteInput struct {
	WorkflowID string `json:"workflow_id" jsonschema:"the agent's permanent id (wpid_...)"`
	Key        string `json:"key,omitempty" jsonschema:"remove the grouped tag with this key (whatever its value)"`
	Label      string `json:"label,omitempty" jsonschema:"remove this standalone label"`
}

// AgentTagsResult lists an agent's current tags.
type AgentTagsResult struct {
	WorkflowID string    `json:"workflow_id"`
	Tags       []TagInfo `json:"tags" jsonschema:"the current tags: labels first, then by key"`
}

// TagInfo is one current tag.
type TagInfo struct {
	Tag    string `json:"tag" jsonschema:"the tag as written in the tools: key:value or label"`
	Key    string `json:"key,omitempty"`
	Value  string `json:"value"`
	Source string `json:"source,omitempty"`
	SetAt  string `json:"set_at,omitempty"`
}

// TagKeyListInput is the input of skyvern_tag_key_list (none).
type TagKeyListInput struct{}

// TagKeyList is the answer of skyvern_tag_key_list.
type TagKeyList struct {
	TagKeys []TagKeyInfo `json:"tag_keys"`
}

// TagKeyInfo is a registered tag key.
type TagKeyInfo struct {
	Key           string `json:"key"`
	Description   string `json:"description,omitempty"`
	WorkflowCount int    `json:"workflow_count" jsonschema:"agents carrying the key"`
}

// TagValueListInput is the input of skyvern_tag_value_list.
type TagValueListInput struct {
	Key string `json:"key,omitempty" jsonschema:"only the values of this key"`
}

// TagValueList is the answer of skyvern_tag_value_list.
type TagValueList struct {
	TagValues []TagValueInfo `json:"tag_values"`
}

// TagValueInfo is a registered key:value pair.
type TagValueInfo struct {
	Tag           string `json:"tag" jsonschema:"key:value"`
	Key           string `json:"key"`
	Value         string `json:"value"`
	Color         string `json:"color"`
	WorkflowCount int    `json:"workflow_count" jsonschema:"agents carrying the tag"`
}

// tagTools read and change agents' tags and list the tag registry.
type tagTools struct {
	agents *client.AgentsService
	tags   *client.TagsService
}

func (t *tagTools) register(s *mcp.Server) {
	addTool(s, spec{
		name:        "skyvern_workflow_tags_get",
		title:       "Get an agent's tags",
		description: "List the tags of an agent (key:value tags and labels)." + ownTool,
		annotations: readOnly(),
		refine:      nonEmptyArgs("workflow_id"),
	}, t.workflowTagsGet)

	addTool(s, spec{
		name:  "skyvern_workflow_tags_set",
		title: "Tag an agent",
		description: "Add tags to an agent: key:value (a key has one value, so this replaces the current one, e.g. env:prod) " +
			"or a bare label (e.g. urgent). Other tags stay. Tags then filter skyvern_workflow_list." + ownTool,
		annotations: writes(true),
		refine: func(p map[string]*jsonschema.Schema) {
			nonEmpty(p, "workflow_id")
			p["tags"].Types, p["tags"].Type = nil, "array"
			p["tags"].MinItems, p["tags"].MaxItems = new(1), new(20)
			p["tags"].Items.MinLength = new(1)
		},
	}, t.workflowTagsSet)

	addTool(s, spec{
		name:        "skyvern_workflow_tag_delete",
		title:       "Remove an agent's tag",
		description: "Remove one tag from an agent: the grouped tag of a key, or a standalone label. Removing an absent tag is not an error." + ownTool,
		annotations: destroys(true),
		refine:      nonEmptyArgs("workflow_id"),
	}, t.workflowTagDelete)

	addTool(s, spec{
		name:        "skyvern_tag_key_list",
		title:       "List tag keys",
		description: "List the tag keys in use (env, team, ...), with their descriptions and how many agents carry each." + ownTool,
		annotations: readOnly(),
	}, t.tagKeyList)

	addTool(s, spec{
		name:        "skyvern_tag_value_list",
		title:       "List tag values",
		description: "List the key:value tags known to the service, with their colours and how many agents carry each, optionally for one key." + ownTool,
		annotations: readOnly(),
	}, t.tagValueList)
}

func (t *tagTools) workflowTagsGet(ctx context.Context, in WorkflowIDInput) (*AgentTagsResult, error) {
	return agentTags(t.agents.GetTags(ctx, in.WorkflowID))
}

func (t *tagTools) workflowTagsSet(ctx context.Context, in WorkflowTagsSetInput) (*AgentTagsResult, error) {
	req := &client.TagApplyRequest{}
	for _, text := range in.Tags {
		tag, err := parseTag(text)
		if err != nil {
			return nil, err
		}
		req.Tags = append(req.Tags, tag)
	}
	if len(in.Colors) > 0 {
		req.Colors = map[string]client.TagColor{}
		for k, c := range in.Colors {
			req.Colors[k] = client.TagColor(c)
		}
	}
	return agentTags(t.agents.ApplyTags(ctx, in.WorkflowID, req))
}

func (t *tagTools) workflowTagDelete(ctx context.Context, in WorkflowTagDeleteInput) (*AgentTagsResult, error) {
	switch {
	case (in.Key == "") == (in.Label == ""):
		return nil, argError("key", "give either key (a grouped tag) or label (a standalone label), not both or neither")
	case in.Key != "":
		return agentTags(t.agents.DeleteTag(ctx, in.WorkflowID, in.Key))
	default:
		return agentTags(t.agents.ApplyTags(ctx, in.WorkflowID, &client.TagApplyRequest{
			TagsToDelete: []client.TagDeleteInput{{Value: in.Label}},
		}))
	}
}

func (t *tagTools) tagKeyList(ctx context.Context, _ TagKeyListInput) (*TagKeyList, error) {
	keys, err := t.tags.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	return &TagKeyList{TagKeys: shapeAll(keys, tagKeyInfo)}, nil
}

func (t *tagTools) tagValueList(ctx context.Context, in TagValueListInput) (*TagValueList, error) {
	values, err := t.tags.ListValues(ctx, in.Key)
	if err != nil {
		return nil, err
	}
	return &TagValueList{TagValues: shapeAll(values, tagValueInfo)}, nil
}

func tagKeyInfo(k *client.TagKey) TagKeyInfo {
	return TagKeyInfo{Key: k.Key, Description: ptr.Value(k.Description), WorkflowCount: k.WorkflowCount}
}

func tagValueInfo(v *client.TagValue) TagValueInfo {
	return TagValueInfo{Tag: v.Key + ":" + v.Value, Key: v.Key, Value: v.Value, Color: string(v.Color), WorkflowCount: v.WorkflowCount}
}

// parseTag reads "key:value" (split at the first colon; the value may hold
// more) or "label".
func parseTag(text string) (client.TagInput, error) {
	text = strings.TrimSpace(text)
	key, value, grouped := strings.Cut(text, ":")
	if !grouped {
		if text == "" {
			return client.TagInput{}, argError("tags", "an empty tag")
		}
		return client.TagInput{Value: text}, nil
	}
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	if key == "" || value == "" {
		return client.TagInput{}, argError("tags", "%q: want key:value with both parts, or a bare label", text)
	}
	return client.TagInput{Key: key, Value: value}, nil
}

// agentTags answers the tools that read or change an agent's tags, from
// what the client call returned.
var agentTags = answerWith(func(t *client.AgentTags) AgentTagsResult {
	return AgentTagsResult{WorkflowID: t.WorkflowPermanentID, Tags: shapeAll(t.Tags, tagInfo)}
})

func tagInfo(tag client.Tag) TagInfo {
	info := TagInfo{Tag: tag.Value, Value: tag.Value, Source: string(tag.Source), SetAt: timeText(&tag.SetAt)}
	if tag.Key != nil {
		info.Key = *tag.Key
		info.Tag = *tag.Key + ":" + tag.Value
	}
	return info
}
