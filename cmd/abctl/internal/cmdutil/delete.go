package cmdutil

import (
	"fmt"
	"strings"

	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

// Deletion is the deletion of one resource by its id, as the delete
// commands of credentials, browser profiles and custom models do it: ask
// first unless Yes, delete, and say so on stderr.
type Deletion struct {
	IO *iostreams.IOStreams
	// Yes (--yes) deletes without asking.
	Yes bool
	// Noun is what the resource is called in messages: "browser profile".
	Noun string
	ID   string
	// Consequence follows the question, saying what deleting breaks:
	// "Runs that start from it will no longer start."
	Consequence string
	// Describe, when not nil, names the resource better than its id alone,
	// which is easy to mistype; it is called only to ask, and its name is
	// then used in the question and in the closing message.
	Describe func() (string, error)
	// Delete deletes the resource.
	Delete func() error
}

// Run asks (unless Yes), deletes, and says what was deleted. A question
// answered other than yes ends the command with exit code 1.
func (d Deletion) Run() error {
	what := d.ID
	if !d.Yes {
		if d.Describe != nil {
			described, err := d.Describe()
			if err != nil {
				return fmt.Errorf("get %s %s: %w", d.Noun, d.ID, err)
			}
			what = described
		}
		question := fmt.Sprintf("Delete %s %s?", d.Noun, what)
		if d.Consequence != "" {
			question += " " + d.Consequence
		}
		if err := ConfirmOrStop(d.IO, question); err != nil {
			return err
		}
	}
	if err := d.Delete(); err != nil {
		return fmt.Errorf("delete %s %s: %w", d.Noun, d.ID, err)
	}
	fmt.Fprintf(d.IO.ErrOut, "%s %s deleted.\n", strings.ToUpper(d.Noun[:1])+d.Noun[1:], what)
	return nil
}
