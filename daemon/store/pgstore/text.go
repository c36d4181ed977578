package pgstore

// What PostgreSQL cannot take that bbolt can: a text parameter or column
// holds valid UTF-8 without a NUL byte. The shared rules (package records)
// are bbolt's; these add PostgreSQL's limits on top of them.

import (
	"strings"
	"unicode/utf8"

	"github.com/abctl/abctl/daemon/store/internal/records"
)

// validKey reports whether id can name a record: records.ValidID, and, as
// PostgreSQL cannot take invalid UTF-8 as a text parameter, valid UTF-8
// (records.ValidID lets it through: bbolt keys are bytes). Ids that fail
// it name nothing.
func validKey(id string) bool {
	return records.ValidID(id) && storable(id)
}

// storable reports whether every text is one a PostgreSQL text column can
// hold: valid UTF-8 without a NUL byte.
func storable(texts ...string) bool {
	for _, s := range texts {
		if strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

// pgText is s as a text column holds it: PostgreSQL's text cannot hold a
// NUL byte nor invalid UTF-8, which become U+FFFD. Used for the caller's
// texts that are only compared (folder ids, statuses, search texts), never
// answered.
func pgText(s string) string {
	if storable(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}
