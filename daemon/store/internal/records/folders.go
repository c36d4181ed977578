package records

import (
	"encoding/json"
	"fmt"

	"github.com/abctl/abctl/client"
)

// Folder is the stored form of a folder. WorkflowCount is not stored (it
// is always 0 in the record): each backend counts the folder's agents.
type Folder struct {
	client.Folder
	DeletedAt *client.Time `json:"deleted_at,omitempty"`
}

// DecodeFolder decodes a stored folder.
func DecodeFolder(raw []byte) (*Folder, error) {
	rec := new(Folder)
	if err := json.Unmarshal(raw, rec); err != nil {
		return nil, fmt.Errorf("store: folder: %w", err)
	}
	return rec, nil
}

// NewFolder is a new folder id of orgID made at now; an empty description
// is stored as null.
func NewFolder(id, orgID, title, description string, now client.Time) *Folder {
	rec := &Folder{Folder: client.Folder{
		Title:          title,
		FolderID:       id,
		OrganizationID: orgID,
		CreatedAt:      now,
		ModifiedAt:     now,
	}}
	if description != "" {
		rec.Description = &description
	}
	return rec
}

// Update changes the folder's title and description (nil leaves a field
// unchanged) and bumps modified_at to now, even when nothing changes.
func (rec *Folder) Update(title, description *string, now client.Time) {
	if title != nil {
		rec.Title = *title
	}
	if description != nil {
		d := *description
		rec.Description = &d
	}
	rec.ModifiedAt = now
}
