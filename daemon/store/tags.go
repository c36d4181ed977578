package store

import (
	"time"

	"github.com/abctl/abctl/client"
)

// MaxTagsPerSubject is the number of tags an agent or a run may carry.
const MaxTagsPerSubject = 20

// SubjectKind tells what a tag subject is.
type SubjectKind int

// Subject kinds.
const (
	AgentSubject SubjectKind = iota // an agent, by workflow_permanent_id
	RunSubject                      // a workflow run, by its wr_ id
)

// TagSubject is what carries tags: an agent or a workflow run.
type TagSubject struct {
	Kind SubjectKind
	ID   string
}

// TagSet sets one tag; Key "" means a standalone label.
type TagSet struct{ Key, Value string }

// TagDelete removes one tag: a grouped tag by Key, or a label by Value
// (Key "").
type TagDelete struct{ Key, Value string }

// TagChange is one atomic change of a subject's tags.
type TagChange struct {
	Set    []TagSet
	Delete []TagDelete
	// Colors gives the colour of the (key, value) pairs that the change
	// registers, by key; a key without one gets a random palette colour.
	// Pairs already registered keep theirs.
	Colors map[string]client.TagColor
	// SetBy is who makes the change: the organization id for an API-key
	// caller, as the hosted service records it.
	SetBy string
}

// TagHistoryQuery filters and limits a tag history.
type TagHistoryQuery struct {
	Limit int        // at most this many events; 0 means 100
	Since *time.Time // only events set at or after this time
	Key   string     // only events of this tag key
}
