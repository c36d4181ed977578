package store

import ()

// ProfileQuery filters and pages a profile list.
type ProfileQuery struct {
	Page, PageSize int
	Search         string // in the name and the description, case aside
	IncludeDeleted bool
}
