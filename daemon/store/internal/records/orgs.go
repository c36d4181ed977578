package records

import (
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// DefaultOrganization is the oldest of orgs (listed oldest first), the
// one a fresh daemon creates; ErrNotFound when there is none.
func DefaultOrganization(orgs []store.Organization) (store.Organization, error) {
	if len(orgs) == 0 {
		return store.Organization{}, store.Errorf(store.ErrNotFound, "no organization")
	}
	return orgs[0], nil
}

// ChangeSession applies fn, a caller's change, to a browser session read
// for Update, stamping modified_at now (clock) when fn changed it; changed
// is false when fn returned store.ErrUnchanged, and nothing is to be
// written.
func ChangeSession(bs *client.BrowserSession, fn func(*client.BrowserSession) error, clock func() client.Time) (changed bool, err error) {
	if err := fn(bs); err == store.ErrUnchanged {
		return false, nil
	} else if err != nil {
		return false, err
	}
	bs.ModifiedAt = clock()
	return true, nil
}
