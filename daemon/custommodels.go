package daemon

import (
	"context"

	"github.com/abctl/abctl/daemon/api"
	"github.com/abctl/abctl/engine"
	"github.com/abctl/abctl/executor"
	"github.com/abctl/abctl/llm"
)

// customModelCheck is the check the API makes of a custom model's
// endpoint when it is saved: one short call, bounded by
// cfg.CustomModelCheck, made by the engine's model client whatever the
// executor (the check does not need a browser).
func customModelCheck(cfg Config) api.ModelCheck {
	return func(ctx context.Context, m executor.CustomModel) error {
		return engine.CheckCustomModel(ctx, m, cfg.CustomModelCheck, llm.WithLogger(cfg.Logger))
	}
}
