package api

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// Tag rules, as the hosted service enforces them.
const (
	maxTagKeyLen         = 64
	maxTagValueLen       = 256
	maxTagKeyDescription = 500
	maxTagsInRequest     = 20  // entries of tags, tags_to_delete and colors
	maxBatchIDs          = 200 // ids in one batch read
	reservedTagKeyPrefix = "skyvern."
)

var tagKeyPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// checkTagKey returns why a (trimmed) tag key is not acceptable, or "".
func checkTagKey(key string) string {
	switch {
	case key == "":
		return "Tag key must not be empty"
	case utf8.RuneCountInString(key) > maxTagKeyLen:
		return fmt.Sprintf("Tag key must be at most %d characters", maxTagKeyLen)
	case !tagKeyPattern.MatchString(key):
		return "Tag key must start with a letter or digit and contain only letters, digits, '_', '.' and '-'"
	case strings.HasPrefix(strings.ToLower(key), reservedTagKeyPrefix):
		return fmt.Sprintf("Tag keys starting with %q are reserved", reservedTagKeyPrefix)
	}
	return ""
}

// checkTagValue returns why a (trimmed) tag value is not acceptable, or "".
// grouped tells a value with a key from a standalone label.
func checkTagValue(value string, grouped bool) string {
	switch {
	case value == "":
		return "Tag value must not be empty"
	case utf8.RuneCountInString(value) > maxTagValueLen:
		return fmt.Sprintf("Tag value must be at most %d characters", maxTagValueLen)
	case !utf8.ValidString(value) || strings.ContainsRune(value, 0):
		return "Tag value must be valid UTF-8 text without NUL characters"
	case strings.Contains(value, ","):
		return "Tag value must not contain ','"
	case grouped && value == "*":
		return "Tag value must not be '*', which filters mean as any value"
	case !grouped && strings.Contains(value, ":"):
		return "A tag without a key must not contain ':'; give the part before it as the key"
	}
	return ""
}

// checkColor normalises a palette colour (trimmed, lowercased) and returns
// why it is not acceptable, or "".
func checkColor(c client.TagColor) (client.TagColor, string) {
	c = client.TagColor(strings.ToLower(strings.TrimSpace(string(c))))
	if !c.IsKnown() {
		names := make([]string, len(client.TagColors))
		for i, k := range client.TagColors {
			names[i] = string(k)
		}
		return c, "Color must be one of the palette: " + strings.Join(names, ", ")
	}
	return c, ""
}

// pathTagKey reads the {key} path parameter. A bad key is a 400 there, not
// a 422: the service checks path keys by hand.
func pathTagKey(r *http.Request) (string, error) {
	key := strings.TrimSpace(r.PathValue("key"))
	if msg := checkTagKey(key); msg != "" {
		return "", errorf(KindBadRequest, "Invalid tag key %q: %s", r.PathValue("key"), msg)
	}
	return key, nil
}

// tagApplyBody is the request body of the apply routes; pointers tell
// missing from empty.
type tagApplyBody struct {
	Tags []struct {
		Key   *string `json:"key"`
		Value *string `json:"value"`
	} `json:"tags"`
	TagsToDelete []struct {
		Key   *string `json:"key"`
		Value *string `json:"value"`
	} `json:"tags_to_delete"`
	Colors map[string]client.TagColor `json:"colors"`
}

// readTagChange decodes and validates an apply body, reporting every
// problem at once.
func readTagChange(r *http.Request) (store.TagChange, error) {
	var body tagApplyBody
	if err := decodeJSONBody(r, &body); err != nil {
		return store.TagChange{}, err
	}
	var errs []client.ValidationError
	var ch store.TagChange
	trimmed := func(p *string) string {
		if p == nil {
			return ""
		}
		return strings.TrimSpace(*p)
	}
	if n := len(body.Tags); n > maxTagsInRequest {
		errs = append(errs, tooLong(n, maxTagsInRequest, nil, "body", "tags"))
	}
	for i, t := range body.Tags {
		key := trimmed(t.Key)
		if t.Key != nil && key != "" {
			if msg := checkTagKey(key); msg != "" {
				errs = append(errs, valueError(msg, *t.Key, "body", "tags", i, "key"))
			}
		}
		if t.Value == nil {
			errs = append(errs, missingField("body", "tags", i, "value"))
			continue
		}
		value := trimmed(t.Value)
		if msg := checkTagValue(value, key != ""); msg != "" {
			errs = append(errs, valueError(msg, *t.Value, "body", "tags", i, "value"))
		}
		ch.Set = append(ch.Set, store.TagSet{Key: key, Value: value})
	}
	if n := len(body.TagsToDelete); n > maxTagsInRequest {
		errs = append(errs, tooLong(n, maxTagsInRequest, nil, "body", "tags_to_delete"))
	}
	for i, d := range body.TagsToDelete {
		key, value := trimmed(d.Key), trimmed(d.Value)
		switch {
		case (key == "") == (value == ""):
			errs = append(errs, valueError("Give exactly one of key (to delete a grouped tag) or value (to delete a tag without a key)", nil, "body", "tags_to_delete", i))
		case key != "":
			if msg := checkTagKey(key); msg != "" {
				errs = append(errs, valueError(msg, *d.Key, "body", "tags_to_delete", i, "key"))
			}
		default:
			if msg := checkTagValue(value, false); msg != "" {
				errs = append(errs, valueError(msg, *d.Value, "body", "tags_to_delete", i, "value"))
			}
		}
		ch.Delete = append(ch.Delete, store.TagDelete{Key: key, Value: value})
	}
	if n := len(body.Colors); n > maxTagsInRequest {
		errs = append(errs, fieldError("too_long", fmt.Sprintf("Dictionary should have at most %d items after validation, not %d", maxTagsInRequest, n), nil, "body", "colors"))
	}
	for key, c := range body.Colors {
		k := strings.TrimSpace(key)
		if msg := checkTagKey(k); msg != "" {
			errs = append(errs, valueError(msg, key, "body", "colors", key))
			continue
		}
		color, msg := checkColor(c)
		if msg != "" {
			errs = append(errs, valueError(msg, string(c), "body", "colors", key))
			continue
		}
		if ch.Colors == nil {
			ch.Colors = map[string]client.TagColor{}
		}
		ch.Colors[k] = color
	}
	if err := invalid(errs); err != nil {
		return store.TagChange{}, err
	}
	ch.SetBy = organization(r.Context()).ID
	return ch, nil
}

// tagRoutes serves the four tag routes of agents or of runs, which differ
// only in the subject kind and in the id field of their answers.
type tagRoutes struct {
	responder
	tags store.Tags
	kind store.SubjectKind
}

func (tr tagRoutes) subject(r *http.Request) store.TagSubject {
	return store.TagSubject{Kind: tr.kind, ID: r.PathValue("id")}
}

// answer answers a subject's current tags: client.AgentTags or
// client.RunTags.
func (tr tagRoutes) answer(w http.ResponseWriter, id string, tags []client.Tag) {
	if tags == nil {
		tags = []client.Tag{}
	}
	if tr.kind == store.RunSubject {
		writeJSON(w, http.StatusOK, client.RunTags{WorkflowRunID: id, Tags: tags})
		return
	}
	writeJSON(w, http.StatusOK, client.AgentTags{WorkflowPermanentID: id, Tags: tags})
}

// apply serves POST .../{id}/tags.
func (tr tagRoutes) apply(w http.ResponseWriter, r *http.Request) {
	ch, err := readTagChange(r)
	if err != nil {
		tr.error(w, r, err)
		return
	}
	subj := tr.subject(r)
	tags, err := tr.tags.Apply(r.Context(), organization(r.Context()).ID, subj, ch)
	if err != nil {
		tr.error(w, r, err)
		return
	}
	tr.answer(w, subj.ID, tags)
}

// get serves GET .../{id}/tags.
func (tr tagRoutes) get(w http.ResponseWriter, r *http.Request) {
	subj := tr.subject(r)
	tags, err := tr.tags.Get(r.Context(), organization(r.Context()).ID, subj)
	if err != nil {
		tr.error(w, r, err)
		return
	}
	tr.answer(w, subj.ID, tags)
}

// delete serves DELETE .../{id}/tags/{key}: the grouped tag of that key
// goes, if present.
func (tr tagRoutes) delete(w http.ResponseWriter, r *http.Request) {
	key, err := pathTagKey(r)
	if err != nil {
		tr.error(w, r, err)
		return
	}
	subj := tr.subject(r)
	org := organization(r.Context()).ID
	tags, err := tr.tags.Apply(r.Context(), org, subj, store.TagChange{
		Delete: []store.TagDelete{{Key: key}}, SetBy: org,
	})
	if err != nil {
		tr.error(w, r, err)
		return
	}
	tr.answer(w, subj.ID, tags)
}

// history serves GET .../{id}/tags/history.
func (tr tagRoutes) history(w http.ResponseWriter, r *http.Request) {
	qr := newQueryReader(r)
	q := store.TagHistoryQuery{
		Limit: qr.int("limit", 100, 1, 500),
		Key:   qr.string("key"),
	}
	if since := qr.time("since"); since != nil {
		t := since.Time
		q.Since = &t
	}
	if err := qr.err(); err != nil {
		tr.error(w, r, err)
		return
	}
	subj := tr.subject(r)
	events, err := tr.tags.History(r.Context(), organization(r.Context()).ID, subj, q)
	if err != nil {
		tr.error(w, r, err)
		return
	}
	if tr.kind == store.RunSubject {
		writeJSON(w, http.StatusOK, client.RunTagHistory{WorkflowRunID: subj.ID, Events: events})
		return
	}
	writeJSON(w, http.StatusOK, client.AgentTagHistory{WorkflowPermanentID: subj.ID, Events: events})
}

// batchTags serves GET and POST /v1/workflow-tags and /v1/run-tags: the
// current tags of many agents or runs. GET takes the ids comma-separated
// in the query parameter param; POST takes {param: [ids]}.
func (s tagRegistryAPI) batchTags(kind store.SubjectKind, param, field, noun string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var idList []string
		if r.Method == http.MethodPost {
			body := map[string][]string{}
			if err := decodeJSONBody(r, &body); err != nil {
				s.error(w, r, err)
				return
			}
			idList = body[param]
		} else {
			for _, v := range r.URL.Query()[param] {
				idList = append(idList, strings.Split(v, ",")...)
			}
		}
		seen := map[string]bool{}
		clean := idList[:0]
		for _, id := range idList {
			if id = strings.TrimSpace(id); id != "" && !seen[id] {
				seen[id] = true
				clean = append(clean, id)
			}
		}
		if len(clean) > maxBatchIDs {
			s.error(w, r, errorf(KindBadRequest, "At most %d %s IDs may be requested at once", maxBatchIDs, noun))
			return
		}
		out, err := s.tags.Batch(r.Context(), organization(r.Context()).ID, kind, clean)
		if err != nil {
			s.error(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{field: out})
	}
}

// handleListTagKeys serves GET /v1/tag-keys.
func (s tagRegistryAPI) handleListTagKeys(w http.ResponseWriter, r *http.Request) {
	out, err := s.tags.Keys(r.Context(), organization(r.Context()).ID)
	s.reply(w, r, out, err)
}

// handleUpdateTagKey serves PATCH /v1/tag-keys/{key}: a null or blank
// description clears it.
func (s tagRegistryAPI) handleUpdateTagKey(w http.ResponseWriter, r *http.Request) {
	key, err := pathTagKey(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	var body struct {
		Description *string `json:"description"`
	}
	if err := decodeJSONBody(r, &body); err != nil {
		s.error(w, r, err)
		return
	}
	desc := body.Description
	if desc != nil {
		if n := utf8.RuneCountInString(*desc); n > maxTagKeyDescription {
			e := fieldError("string_too_long", fmt.Sprintf("String should have at most %d characters", maxTagKeyDescription), *desc, "body", "description")
			s.error(w, r, invalid([]client.ValidationError{e}))
			return
		}
		if strings.TrimSpace(*desc) == "" {
			desc = nil
		}
	}
	out, err := s.tags.UpdateKey(r.Context(), organization(r.Context()).ID, key, desc)
	s.reply(w, r, out, err)
}

// handleDeleteTagKey serves DELETE /v1/tag-keys/{key}.
func (s tagRegistryAPI) handleDeleteTagKey(w http.ResponseWriter, r *http.Request) {
	key, err := pathTagKey(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	org := organization(r.Context()).ID
	out, err := s.tags.DeleteKey(r.Context(), org, key, org)
	s.reply(w, r, out, err)
}

// handleListTagValues serves GET /v1/tag-values, optionally ?key=.
func (s tagRegistryAPI) handleListTagValues(w http.ResponseWriter, r *http.Request) {
	out, err := s.tags.Values(r.Context(), organization(r.Context()).ID, strings.TrimSpace(queryValue(r, "key")))
	s.reply(w, r, out, err)
}

// tagValueBody is the body of the tag-value routes; which fields are
// required depends on the route.
type tagValueBody struct {
	Key      *string          `json:"key"`
	Value    *string          `json:"value"`
	NewValue *string          `json:"new_value"`
	Color    *client.TagColor `json:"color"`
}

// tagValueFields lists what a route needs of a tagValueBody.
type tagValueFields struct {
	key, newValue bool // required
	color         int  // 0: not read, 1: optional, 2: required
}

// readTagValueBody decodes and validates a tag-value body: the trimmed
// key, value and new value, and the normalised colour ("" when absent).
func readTagValueBody(r *http.Request, need tagValueFields) (key, value, newValue string, color client.TagColor, err error) {
	var body tagValueBody
	if err := decodeJSONBody(r, &body); err != nil {
		return "", "", "", "", err
	}
	var errs []client.ValidationError
	if need.key {
		if body.Key == nil {
			errs = append(errs, missingField("body", "key"))
		} else if key = strings.TrimSpace(*body.Key); checkTagKey(key) != "" {
			errs = append(errs, valueError(checkTagKey(key), *body.Key, "body", "key"))
		}
	}
	if body.Value == nil {
		errs = append(errs, missingField("body", "value"))
	} else if value = strings.TrimSpace(*body.Value); checkTagValue(value, true) != "" && value != "*" {
		errs = append(errs, valueError(checkTagValue(value, true), *body.Value, "body", "value"))
	}
	if need.newValue {
		if body.NewValue == nil {
			errs = append(errs, missingField("body", "new_value"))
		} else if newValue = strings.TrimSpace(*body.NewValue); checkTagValue(newValue, true) != "" {
			errs = append(errs, valueError(checkTagValue(newValue, true), *body.NewValue, "body", "new_value"))
		} else if newValue == value {
			errs = append(errs, valueError("new_value must differ from value", *body.NewValue, "body", "new_value"))
		}
	}
	switch {
	case need.color == 0:
	case body.Color == nil && need.color == 2:
		errs = append(errs, missingField("body", "color"))
	case body.Color != nil:
		var msg string
		if color, msg = checkColor(*body.Color); msg != "" {
			errs = append(errs, valueError(msg, string(*body.Color), "body", "color"))
		}
	}
	if err := invalid(errs); err != nil {
		return "", "", "", "", err
	}
	return key, value, newValue, color, nil
}

// handleCreateTagValue serves POST /v1/tag-values.
func (s tagRegistryAPI) handleCreateTagValue(w http.ResponseWriter, r *http.Request) {
	key, value, _, color, err := readTagValueBody(r, tagValueFields{key: true, color: 1})
	if err == nil && value == "*" {
		err = invalid([]client.ValidationError{valueError(checkTagValue(value, true), value, "body", "value")})
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	out, err := s.tags.CreateValue(r.Context(), organization(r.Context()).ID, key, value, color)
	s.reply(w, r, out, err)
}

// handleRecolorTagValue serves PATCH /v1/tag-values/{key}.
func (s tagRegistryAPI) handleRecolorTagValue(w http.ResponseWriter, r *http.Request) {
	key, err := pathTagKey(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	_, value, _, color, err := readTagValueBody(r, tagValueFields{color: 2})
	if err != nil {
		s.error(w, r, err)
		return
	}
	out, err := s.tags.RecolorValue(r.Context(), organization(r.Context()).ID, key, value, color)
	s.reply(w, r, out, err)
}

// handleDeleteTagValue serves DELETE /v1/tag-values/{key}, with the value
// in a JSON body (values may contain '/', so they are not in paths).
func (s tagRegistryAPI) handleDeleteTagValue(w http.ResponseWriter, r *http.Request) {
	key, err := pathTagKey(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	_, value, _, _, err := readTagValueBody(r, tagValueFields{})
	if err != nil {
		s.error(w, r, err)
		return
	}
	org := organization(r.Context()).ID
	out, err := s.tags.DeleteValue(r.Context(), org, key, value, org)
	s.reply(w, r, out, err)
}

// handleRenameTagValue serves PATCH /v1/tag-values/{key}/rename.
func (s tagRegistryAPI) handleRenameTagValue(w http.ResponseWriter, r *http.Request) {
	key, err := pathTagKey(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	_, value, newValue, _, err := readTagValueBody(r, tagValueFields{newValue: true})
	if err != nil {
		s.error(w, r, err)
		return
	}
	org := organization(r.Context()).ID
	out, err := s.tags.RenameValue(r.Context(), org, key, value, newValue, org)
	s.reply(w, r, out, err)
}
