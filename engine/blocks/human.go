package blocks

import (
	"context"
	"errors"

	"github.com/abctl/abctl/client"
)

// human_interaction blocks.

// HumanAsker asks a person (see Run.Human).
type HumanAsker interface{}

func checkHumanInteraction(b *client.HumanInteractionBlock) error {
	return errors.New("human_interaction: not yet")
}

func (in *Interpreter) humanInteraction(ctx context.Context, b *client.HumanInteractionBlock, sc *scope) (any, error) {
	return nil, errors.New("human_interaction: not yet")
}
