package client

import (
	"context"
	"net/url"
	"strconv"
	"strings"
)

// TagsService manages the organization's tag registry: tag keys with their
// descriptions, and tag values with their palette colours. Tags on agents
// and runs are applied through AgentsService and RunsService.
type TagsService service

// ListKeys returns the tag keys registered for the organization, ordered by
// key (GET /v1/tag-keys).
func (s *TagsService) ListKeys(ctx context.Context, opts ...Option) ([]*TagKey, error) {
	var out []*TagKey
	_, err := s.client.do(ctx, request{method: "GET", path: "/v1/tag-keys", idempotent: true}, &out, opts)
	return out, err
}

// UpdateKey sets a key's description; an empty description clears it
// (PATCH /v1/tag-keys/{key}). At most 500 characters.
func (s *TagsService) UpdateKey(ctx context.Context, key, description string, opts ...Option) (*TagKey, error) {
	if err := requireID("tag key", key); err != nil {
		return nil, err
	}
	body := tagKeyUpdate{}
	if description != "" {
		body.Description = &description
	}
	out := new(TagKey)
	_, err := s.client.do(ctx, request{method: "PATCH", path: pathf("/v1/tag-keys/%s", key), body: body, idempotent: true}, out, opts)
	return out, err
}

// DeleteKey removes a key from the registry and the tag from every agent
// and run carrying it (DELETE /v1/tag-keys/{key}).
func (s *TagsService) DeleteKey(ctx context.Context, key string, opts ...Option) (*TagKeyDeleteResponse, error) {
	if err := requireID("tag key", key); err != nil {
		return nil, err
	}
	out := new(TagKeyDeleteResponse)
	// Not idempotent: a second delete answers 404, which would hide the
	// success of a first attempt whose reply was lost.
	_, err := s.client.do(ctx, request{method: "DELETE", path: pathf("/v1/tag-keys/%s", key)}, out, opts)
	return out, err
}

// ListValues returns the registered tag values, ordered by key then value,
// optionally only those of one key (GET /v1/tag-values).
func (s *TagsService) ListValues(ctx context.Context, key string, opts ...Option) ([]*TagValue, error) {
	var q url.Values
	if key != "" {
		q = url.Values{"key": {key}}
	}
	var out []*TagValue
	_, err := s.client.do(ctx, request{method: "GET", path: "/v1/tag-values", query: q, idempotent: true}, &out, opts)
	return out, err
}

// CreateValue registers a (key, value) pair with a colour before any agent
// uses it (POST /v1/tag-values). An existing pair answers 409 (ErrConflict).
func (s *TagsService) CreateValue(ctx context.Context, req *TagValueCreateRequest, opts ...Option) (*TagValue, error) {
	out := new(TagValue)
	_, err := s.client.do(ctx, request{method: "POST", path: "/v1/tag-values", body: req}, out, opts)
	return out, err
}

// UpdateValue recolours a (key, value) pair (PATCH /v1/tag-values/{key}).
func (s *TagsService) UpdateValue(ctx context.Context, key, value string, color TagColor, opts ...Option) (*TagValue, error) {
	if err := requireID("tag key", key); err != nil {
		return nil, err
	}
	out := new(TagValue)
	_, err := s.client.do(ctx, request{
		method: "PATCH", path: pathf("/v1/tag-values/%s", key),
		body: tagValueUpdate{Value: value, Color: color}, idempotent: true,
	}, out, opts)
	return out, err
}

// DeleteValue removes a (key, value) pair and the label from every agent
// carrying it (DELETE /v1/tag-values/{key}, with the value in a JSON body).
func (s *TagsService) DeleteValue(ctx context.Context, key, value string, opts ...Option) (*TagValueDeleteResponse, error) {
	if err := requireID("tag key", key); err != nil {
		return nil, err
	}
	out := new(TagValueDeleteResponse)
	_, err := s.client.do(ctx, request{
		method: "DELETE", path: pathf("/v1/tag-values/%s", key), body: tagValueDelete{Value: value},
	}, out, opts)
	return out, err
}

// RenameValue renames (key, value) to (key, newValue), re-tagging every
// agent that carried the old value (PATCH /v1/tag-values/{key}/rename). A
// newValue that already exists answers 409 (ErrConflict).
func (s *TagsService) RenameValue(ctx context.Context, key, value, newValue string, opts ...Option) (*TagValueRenameResponse, error) {
	if err := requireID("tag key", key); err != nil {
		return nil, err
	}
	out := new(TagValueRenameResponse)
	_, err := s.client.do(ctx, request{
		method: "PATCH", path: pathf("/v1/tag-values/%s/rename", key),
		body: tagValueRename{Value: value, NewValue: newValue},
	}, out, opts)
	return out, err
}

// tagResource is the shared implementation of the tag routes that exist
// for both agents (/v1/agents/{id}/tags...) and runs (/v1/runs/{id}/tags...).
type tagResource struct {
	client *Client
	kind   string // "agent id" or "run id", for errors
	prefix string // "/v1/agents/%s" or "/v1/runs/%s"
}

func (t tagResource) apply(ctx context.Context, id string, req *TagApplyRequest, out any, opts []Option) error {
	if err := requireID(t.kind, id); err != nil {
		return err
	}
	if req == nil {
		req = &TagApplyRequest{}
	}
	_, err := t.client.do(ctx, request{method: "POST", path: pathf(t.prefix+"/tags", id), body: req, idempotent: true}, out, opts)
	return err
}

func (t tagResource) get(ctx context.Context, id string, out any, opts []Option) error {
	if err := requireID(t.kind, id); err != nil {
		return err
	}
	_, err := t.client.do(ctx, request{method: "GET", path: pathf(t.prefix+"/tags", id), idempotent: true}, out, opts)
	return err
}

func (t tagResource) delete(ctx context.Context, id, key string, out any, opts []Option) error {
	if err := requireID(t.kind, id); err != nil {
		return err
	}
	if err := requireID("tag key", key); err != nil {
		return err
	}
	_, err := t.client.do(ctx, request{method: "DELETE", path: pathf(t.prefix+"/tags/%s", id, key), idempotent: true}, out, opts)
	return err
}

func (t tagResource) history(ctx context.Context, id string, o *TagHistoryOptions, out any, opts []Option) error {
	if err := requireID(t.kind, id); err != nil {
		return err
	}
	q := url.Values{}
	if o != nil {
		if o.Limit != 0 {
			q.Set("limit", strconv.Itoa(o.Limit))
		}
		if o.Since != nil {
			q.Set("since", o.Since.String())
		}
		if o.Key != "" {
			q.Set("key", o.Key)
		}
	}
	_, err := t.client.do(ctx, request{method: "GET", path: pathf(t.prefix+"/tags/history", id), query: q, idempotent: true}, out, opts)
	return err
}

// batch reads the current tags of many agents or runs at once; param is the
// query parameter that carries the comma-separated ids.
func batchTags[T any](ctx context.Context, c *Client, path, param string, ids []string, out *T, opts []Option) error {
	q := url.Values{}
	if len(ids) > 0 {
		q.Set(param, strings.Join(ids, ","))
	}
	_, err := c.do(ctx, request{method: "GET", path: path, query: q, idempotent: true}, out, opts)
	return err
}
