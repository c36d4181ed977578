package blocks

import (
	"context"
	"errors"

	"github.com/abctl/abctl/client"
)

// email_inbox blocks over IMAP.

func checkEmailInbox(b *client.EmailInboxBlock) error {
	return errors.New("email_inbox: not yet")
}

func (in *Interpreter) emailInbox(ctx context.Context, b *client.EmailInboxBlock, sc *scope) (any, error) {
	return nil, errors.New("email_inbox: not yet")
}
