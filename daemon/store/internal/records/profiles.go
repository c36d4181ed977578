package records

import (
	"fmt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// Profile is the stored form of a browser profile.
type Profile struct {
	client.BrowserProfile
	Sealed []byte `json:"sealed,omitempty"` // the state sealed (store.ProfileAD); nil: an empty profile
}

// NewProfile is a new profile id of orgID made at now; wpid names the
// agent whose run it came from, if any. Its state is the caller's to seal.
func NewProfile(id, orgID, name, description, wpid string, now client.Time) *Profile {
	rec := &Profile{BrowserProfile: client.BrowserProfile{
		BrowserProfileID: id, OrganizationID: orgID, Name: name, CreatedAt: now, ModifiedAt: now,
	}}
	if description != "" {
		rec.Description = &description
	}
	if wpid != "" {
		rec.WorkflowPermanentID = &wpid
	}
	return rec
}

// StateKey is the key of a kept browser state: kind 0x00 id.
func StateKey(kind byte, id string) []byte { return append([]byte{kind, 0}, id...) }

// StateAD is the store.BrowserStateAD of the state kept under key (a
// StateKey) for orgID.
func StateAD(orgID string, key []byte) []byte {
	return store.BrowserStateAD(orgID, key[0], string(key[2:]))
}

// SealState seals a browser state (a profile's or a kept one) bound to ad.
func SealState(sl *store.Sealer, plain, ad []byte) ([]byte, error) {
	if sl == nil {
		return nil, store.Errorf(store.ErrInvalid, "this daemon has no secret to seal browser states with")
	}
	return sl.Seal(plain, ad)
}

// OpenState unseals a browser state bound to ad. The error never holds
// the state.
func OpenState(sl *store.Sealer, sealed, ad []byte) ([]byte, error) {
	if sl == nil {
		return nil, store.Errorf(store.ErrInvalid, "this daemon has no secret to open browser states with")
	}
	plain, err := sl.Open(sealed, ad)
	if err != nil {
		return nil, fmt.Errorf("store: a browser state cannot be opened with this daemon's secret")
	}
	return plain, nil
}
