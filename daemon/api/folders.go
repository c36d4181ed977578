package api

import (
	"net/http"
	"unicode/utf8"

	"github.com/abctl/abctl/client"
)

// checkTitle validates a folder title: 1 to 255 characters.
func checkTitle(title string, loc ...any) []client.ValidationError {
	n := utf8.RuneCountInString(title)
	if n < 1 {
		return []client.ValidationError{fieldError("string_too_short", "String should have at least 1 character", title, loc...)}
	}
	if n > 255 {
		return []client.ValidationError{fieldError("string_too_long", "String should have at most 255 characters", title, loc...)}
	}
	return nil
}

// folderBody is the body of a folder's create or update: pointers tell an
// absent member from an empty one.
type folderBody struct {
	Title       *string `json:"title"`
	Description *string `json:"description"`
}

// handleCreateFolder serves POST /v1/folders.
func (s foldersAPI) handleCreateFolder(w http.ResponseWriter, r *http.Request) {
	var body folderBody
	if err := decodeJSONBody(r, &body); err != nil {
		s.error(w, r, err)
		return
	}
	if body.Title == nil {
		s.error(w, r, invalid([]client.ValidationError{fieldError("missing", "Field required", nil, "body", "title")}))
		return
	}
	if err := invalid(checkTitle(*body.Title, "body", "title")); err != nil {
		s.error(w, r, err)
		return
	}
	desc := ""
	if body.Description != nil {
		desc = *body.Description
	}
	out, err := s.folders.Create(r.Context(), organization(r.Context()).ID, *body.Title, desc)
	s.reply(w, r, out, err)
}

// handleListFolders serves GET /v1/folders.
func (s foldersAPI) handleListFolders(w http.ResponseWriter, r *http.Request) {
	qr := newQueryReader(r)
	page, size := qr.paging(100, 0, 500)
	if err := qr.err(); err != nil {
		s.error(w, r, err)
		return
	}
	out, err := s.folders.List(r.Context(), organization(r.Context()).ID, page, size, qr.string("search"))
	if err != nil {
		s.error(w, r, err)
		return
	}
	if out == nil {
		out = []*client.Folder{}
	}
	writeJSON(w, http.StatusOK, out)
}

// handleUpdateFolder serves PUT /v1/folders/{id}; absent or null fields stay
// as they are.
func (s foldersAPI) handleUpdateFolder(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var body folderBody
	if err := decodeJSONBody(r, &body); err != nil {
		s.error(w, r, err)
		return
	}
	if body.Title != nil {
		if err := invalid(checkTitle(*body.Title, "body", "title")); err != nil {
			s.error(w, r, err)
			return
		}
	}
	out, err := s.folders.Update(r.Context(), organization(r.Context()).ID, id, body.Title, body.Description)
	s.reply(w, r, out, err)
}

// handleDeleteFolder serves DELETE /v1/folders/{id}.
func (s foldersAPI) handleDeleteFolder(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	qr := newQueryReader(r)
	deleteAgents := qr.bool("delete_workflows")
	if err := qr.err(); err != nil {
		s.error(w, r, err)
		return
	}
	if err := s.folders.Delete(r.Context(), organization(r.Context()).ID, id, deleteAgents); err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, client.FolderDeleteResponse{Status: "deleted", FolderID: id, WorkflowsDeleted: deleteAgents})
}
