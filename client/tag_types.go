package client

// Tags come in two forms: a grouped tag (key and value, "env:prod") and a
// standalone label (a value with no key, "urgent"). Tag values may contain
// "/", so they travel in request bodies, never in paths.

// TagInput sets one tag. Key empty means a standalone label, whose value may
// not contain ":"; a grouped value may not be exactly "*".
type TagInput struct {
	Key   string `json:"key,omitempty"`
	Value string `json:"value"`
}

// TagDeleteInput removes one tag: set Key for a grouped tag, or Value for a
// standalone label, not both.
type TagDeleteInput struct {
	Key   string `json:"key,omitempty"`
	Value string `json:"value,omitempty"`
}

// TagApplyRequest changes the tags of an agent or a run in one transaction.
// When the same key is both set and deleted, the set wins. At most 20
// entries in each list.
type TagApplyRequest struct {
	Tags         []TagInput       `json:"tags,omitempty"`
	TagsToDelete []TagDeleteInput `json:"tags_to_delete,omitempty"`
	// Colors gives the palette colour of new (key, value) pairs by key;
	// pairs without one get a random colour.
	Colors map[string]TagColor `json:"colors,omitempty"`
}

// Tag is a current tag of an agent or a run.
type Tag struct {
	Key    *string   `json:"key"` // nil for a standalone label
	Value  string    `json:"value"`
	Source TagSource `json:"source"`
	SetAt  Time      `json:"set_at"`
	SetBy  string    `json:"set_by"`
}

// RunTags is the set of current tags of a workflow run, standalone labels
// first, then by key, then by value.
type RunTags struct {
	WorkflowRunID string `json:"workflow_run_id"`
	Tags          []Tag  `json:"tags"`
}

// AgentTags is the set of current tags of an agent, ordered as RunTags.
type AgentTags struct {
	WorkflowPermanentID string `json:"workflow_permanent_id"`
	Tags                []Tag  `json:"tags"`
}

// TagEvent is one entry of a tag history.
type TagEvent struct {
	TagEventID string  `json:"tag_event_id"` // rtge_ for runs, tge_ for agents
	Key        *string `json:"key"`
	// Value is nil on the delete of a grouped tag; the delete of a label
	// keeps its value.
	Value        *string      `json:"value"`
	EventType    TagEventType `json:"event_type"`
	Source       TagSource    `json:"source"`
	SetAt        Time         `json:"set_at"`
	SetBy        string       `json:"set_by"`
	SupersededAt *Time        `json:"superseded_at"`
}

// RunTagHistory is the tag history of a workflow run, newest first.
type RunTagHistory struct {
	WorkflowRunID string     `json:"workflow_run_id"`
	Events        []TagEvent `json:"events"`
}

// AgentTagHistory is the tag history of an agent, newest first.
type AgentTagHistory struct {
	WorkflowPermanentID string     `json:"workflow_permanent_id"`
	Events              []TagEvent `json:"events"`
}

// TagHistoryOptions filters a tag history.
type TagHistoryOptions struct {
	Limit int    // 1 to 500; 0 means the server default (100)
	Since *Time  // only events at or after this time
	Key   string // only events of this tag key
}

// TagItem is a tag in the batch reads.
type TagItem struct {
	Key   *string `json:"key"`
	Value string  `json:"value"`
}

// TagKey is a registered tag key with its description and the number of
// agents carrying it.
type TagKey struct {
	Key           string  `json:"key"`
	Description   *string `json:"description"`
	WorkflowCount int     `json:"workflow_count"`
}

// TagKeyDeleteResponse reports a key's deletion and how many carriers lost it.
type TagKeyDeleteResponse struct {
	Key                      string `json:"key"`
	RemovedFromWorkflowCount int    `json:"removed_from_workflow_count"`
	RemovedFromRunCount      int    `json:"removed_from_run_count"`
	RemovedCount             int    `json:"removed_count"`
}

// TagValue is a registered (key, value) pair with its colour and the number
// of non-deleted agents carrying it.
type TagValue struct {
	Key           string   `json:"key"`
	Value         string   `json:"value"`
	Color         TagColor `json:"color"`
	WorkflowCount int      `json:"workflow_count"`
}

// TagValueCreateRequest registers a (key, value) pair before any agent uses
// it. Color empty means a random palette colour.
type TagValueCreateRequest struct {
	Key   string   `json:"key"`
	Value string   `json:"value"`
	Color TagColor `json:"color,omitempty"`
}

// TagValueDeleteResponse reports a value's deletion and how many carriers
// lost it.
type TagValueDeleteResponse struct {
	Key                      string `json:"key"`
	Value                    string `json:"value"`
	RemovedFromWorkflowCount int    `json:"removed_from_workflow_count"`
	RemovedFromRunCount      int    `json:"removed_from_run_count"`
	RemovedCount             int    `json:"removed_count"`
}

// TagValueRenameResponse reports a rename: the new value keeps the old
// colour.
type TagValueRenameResponse struct {
	Key                  string   `json:"key"`
	Value                string   `json:"value"`
	Color                TagColor `json:"color"`
	RenamedWorkflowCount int      `json:"renamed_workflow_count"`
}

// Request bodies of the tag-value routes whose key is in the path.
type (
	tagValueUpdate struct {
		Value string   `json:"value"`
		Color TagColor `json:"color"`
	}
	tagValueRename struct {
		Value    string `json:"value"`
		NewValue string `json:"new_value"`
	}
	tagValueDelete struct {
		Value string `json:"value"`
	}
	tagKeyUpdate struct {
		Description *string `json:"description"`
	}
)
