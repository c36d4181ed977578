package records

import (
	"strings"

	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
)

// Prefixes of tag event ids, as the hosted service makes them.
const (
	PrefixAgentTagEvent = "tge"
	PrefixRunTagEvent   = "rtge"
)

// StrPtr is nil for "", as the API answers an unset key or value.
func StrPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// SubjectOf tells the kind of a subject from its id: the store makes agent
// ids with the wpid_ prefix, and only those.
func SubjectOf(id string) store.TagSubject {
	if strings.HasPrefix(id, ids.PrefixAgent+"_") {
		return store.TagSubject{Kind: store.AgentSubject, ID: id}
	}
	return store.TagSubject{Kind: store.RunSubject, ID: id}
}

// TagSet is one set that a tag change makes: the slot's key ("" for a
// standalone label, which its value names), the new value, and the current
// row it replaces (nil for none).
type TagSet[R any] struct {
	Key, Value string
	Prev       *R
}

// PlanTagChange resolves ch against rows, a subject's current tags (slot
// tells a row's key and value), into the rows to remove and the sets to
// make, in that order. Within the change a grouped tag is keyed by its key
// (the last value wins) and a label by its value; a set and a delete of the
// same slot resolve to the set; setting what is already there and deleting
// what is absent change nothing. A TooManyTagsError when the subject would
// carry more than store.MaxTagsPerSubject tags and more than it does now.
func PlanTagChange[R any](subj store.TagSubject, rows []R, slot func(*R) (key, value string), ch store.TagChange) (deletes []*R, sets []TagSet[R], err error) {
	type slotID struct{ key, value string } // key "" for a label slot (value names it)
	slotOf := func(key, value string) slotID {
		if key != "" {
			return slotID{key: key}
		}
		return slotID{value: value}
	}
	current := make(map[slotID]*R, len(rows))
	for i := range rows {
		current[slotOf(slot(&rows[i]))] = &rows[i]
	}

	// Sets by slot in first-seen order, the last value of a key winning;
	// deletes of slots that are present and not set.
	var order []slotID
	values := map[slotID]string{}
	for _, s := range ch.Set {
		sl := slotOf(s.Key, s.Value)
		if _, seen := values[sl]; !seen {
			order = append(order, sl)
		}
		values[sl] = s.Value
	}
	deleted := map[slotID]bool{}
	for _, d := range ch.Delete {
		sl := slotOf(d.Key, d.Value)
		if _, isSet := values[sl]; isSet || deleted[sl] {
			continue
		}
		if row := current[sl]; row != nil {
			deleted[sl] = true
			deletes = append(deletes, row)
		}
	}
	total := len(rows) - len(deletes)
	for _, sl := range order {
		if current[sl] == nil {
			total++
		}
	}
	if total > store.MaxTagsPerSubject && total > len(rows) {
		return nil, nil, &store.TooManyTagsError{Subject: subj, Tags: total, Max: store.MaxTagsPerSubject}
	}
	for _, sl := range order {
		value, prev := values[sl], current[sl]
		if prev != nil {
			if _, v := slot(prev); v == value {
				continue
			}
		}
		sets = append(sets, TagSet[R]{Key: sl.key, Value: value, Prev: prev})
	}
	return deletes, sets, nil
}

// RemoveKey removes the grouped tag key from each subject of ids with
// apply (the backend's change of one subject's tags, in its transaction),
// and counts the agents and the runs it was removed from.
func RemoveKey(ids []string, key string, apply func(store.TagSubject, store.TagChange) error) (agents, runs int, err error) {
	for _, id := range ids {
		subj := SubjectOf(id)
		if err := apply(subj, store.TagChange{Delete: []store.TagDelete{{Key: key}}}); err != nil {
			return 0, 0, err
		}
		if subj.Kind == store.AgentSubject {
			agents++
		} else {
			runs++
		}
	}
	return agents, runs, nil
}
