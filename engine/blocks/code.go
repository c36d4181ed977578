package blocks

import (
	"context"
	"errors"

	"github.com/abctl/abctl/client"
)

// code blocks.

// CodeConfig says whether and how code blocks run.
type CodeConfig struct{}

func checkCode(b *client.CodeBlock) error {
	return errors.New("code: not yet")
}

func (in *Interpreter) code(ctx context.Context, b *client.CodeBlock, sc *scope) (any, error) {
	return nil, errors.New("code: not yet")
}
