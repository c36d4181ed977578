package store

import (
	"errors"
	"fmt"
)

// Sentinel errors. The store's errors wrap one of them (test with
// errors.Is). An error about a record is a typed value that says which
// (NotFoundError, ConflictError, TooManyTagsError), in the store's words:
// how a client is told (the status, the hosted service's wording) is
// decided by the layer that answers it, package daemon/api's errors table.
var (
	ErrNotFound     = errors.New("not found")
	ErrConflict     = errors.New("conflict")
	ErrLocked       = errors.New("store locked")
	ErrSchemaTooNew = errors.New("store schema is newer than this abctl")
	// ErrInvalid is a request the store refuses although each of its
	// fields is valid on its own (too many tags on one agent, say).
	ErrInvalid = errors.New("invalid")
)

// Record names a kind of record in the store's errors.
type Record string

// Kinds of records.
const (
	RecordOrganization Record = "organization"
	RecordAgent        Record = "agent"
	RecordFolder       Record = "folder"
	RecordCredential   Record = "credential"
	RecordProfile      Record = "browser profile"
	RecordSession      Record = "browser session"
	RecordSchedule     Record = "schedule"
	RecordRun          Record = "run"
	// RecordWorkflowRun is a run looked up as a tag subject: only workflow
	// runs (wr_) carry tags.
	RecordWorkflowRun Record = "workflow run"
	RecordTagKey      Record = "tag key"
	RecordTagValue    Record = "tag value"
)

// NotFoundError is the error of a lookup that found no such record in the
// organization (or one that is deleted). It matches ErrNotFound.
type NotFoundError struct {
	Record Record
	// ID is the record's id; for a tag key or a tag value, the key.
	ID string
	// Value is the value of a tag value.
	Value string
	// Version is the agent version looked for; 0 means the latest.
	Version int
}

func (e *NotFoundError) Error() string {
	switch {
	case e.Record == RecordTagValue:
		return fmt.Sprintf("tag value %s:%s not found", e.ID, e.Value)
	case e.Version != 0:
		return fmt.Sprintf("version %d of %s %s not found", e.Version, e.Record, e.ID)
	}
	return fmt.Sprintf("%s %s not found", e.Record, e.ID)
}

// Is makes the error match ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// ConflictError is the error of a create or rename whose record exists
// already. It matches ErrConflict.
type ConflictError struct {
	Record Record
	// ID is the record's id; for a tag value, its key.
	ID string
	// Value is the value of a tag value.
	Value string
}

func (e *ConflictError) Error() string {
	if e.Record == RecordTagValue {
		return fmt.Sprintf("tag value %s:%s already exists", e.ID, e.Value)
	}
	return fmt.Sprintf("%s %s already exists", e.Record, e.ID)
}

// Is makes the error match ErrConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// TooManyTagsError is the error of a tag change that would leave its
// subject with more than Max tags. It matches ErrInvalid.
type TooManyTagsError struct {
	Subject TagSubject
	Tags    int // how many the subject would carry
	Max     int // MaxTagsPerSubject
}

func (e *TooManyTagsError) Error() string {
	noun := RecordAgent
	if e.Subject.Kind == RunSubject {
		noun = RecordWorkflowRun
	}
	return fmt.Sprintf("%s %s would carry %d tags; at most %d are allowed", noun, e.Subject.ID, e.Tags, e.Max)
}

// Is makes the error match ErrInvalid.
func (e *TooManyTagsError) Is(target error) bool { return target == ErrInvalid }

// storeError is an error of a sentinel kind with its own message, so that
// the message reads well on its own while errors.Is still finds the kind.
type storeError struct {
	kind  error
	cause error // optional
	msg   string
}

func (e *storeError) Error() string { return e.msg }

func (e *storeError) Unwrap() []error {
	if e.cause != nil {
		return []error{e.kind, e.cause}
	}
	return []error{e.kind}
}

// Errorf returns an error of kind (one of the sentinel errors) whose
// message is the formatted text alone: errors.Is finds the kind, and the
// message reads well without it.
func Errorf(kind error, format string, args ...any) error {
	return &storeError{kind: kind, msg: fmt.Sprintf(format, args...)}
}
