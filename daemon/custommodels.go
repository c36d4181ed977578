package daemon

import (
	"context"

	"github.com/abctl/abctl/daemon/api"
	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/llm"
)

// customModelCheck is the check the API makes of a custom model's
// endpoint when it is saved: one short call, bounded by
// cfg.CustomModelCheck, made by the engine's model client whatever the
// executor (the check does not need a browser). The api_base is the
// organization's to give: the call connects through guard(orgID), the
// organization's egress guard, as its runs' calls to the model do (guard
// nil, or a nil guard: no policy).
func customModelCheck(cfg Config, guard func(orgID string) *egress.Guard) api.ModelCheck {
	return func(ctx context.Context, orgID string, m executor.CustomModel) error {
		opts := []llm.Option{llm.WithLogger(cfg.Logger)}
		if guard != nil {
			if hc := engine.CustomModelClient(guard(orgID), 0); hc != nil {
				defer hc.CloseIdleConnections()
				opts = append(opts, llm.WithHTTPClient(hc))
			}
		}
		return engine.CheckCustomModel(ctx, m, cfg.CustomModelCheck, opts...)
	}
}
