package app

import (
	"time"

	"github.com/turnpike-gw/turnpike/internal/admin"
	"github.com/turnpike-gw/turnpike/internal/guardrail"
)

// guardrailRefresh is how soon a guardrail changed through another node is
// enforced here; the node that made the change rebuilds at once.
const guardrailRefresh = 3 * time.Second

// newGuardrails is the guardrail engine over the database, with guardrail
// plugins run by the task plugin runtime (one runtime, one sandbox).
func (a *App) newGuardrails() *guardrail.Engine {
	return guardrail.NewEngine(guardrail.StoreSource{Repo: a.Store.Guardrails()}, a.plugins, a.Log)
}

// guardrailDeps are the guardrail administration's dependencies.
func (a *App) guardrailDeps() admin.GuardrailDeps {
	return admin.GuardrailDeps{Engine: a.guardrails, PluginRunner: a.plugins, CheckPlugin: a.plugins.CheckGuardrailPlugin}
}
