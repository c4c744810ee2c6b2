package app

import (
	"time"

	"github.com/turnpike-gw/turnpike/internal/billing"
	"github.com/turnpike-gw/turnpike/internal/protocol"
	"github.com/turnpike-gw/turnpike/internal/protocol/anthropic"
	"github.com/turnpike-gw/turnpike/internal/protocol/gemini"
	"github.com/turnpike-gw/turnpike/internal/protocol/openai"
	"github.com/turnpike-gw/turnpike/internal/protocol/responses"
	"github.com/turnpike-gw/turnpike/internal/providers"
	"github.com/turnpike-gw/turnpike/internal/relay"
	"github.com/turnpike-gw/turnpike/internal/respcache"
	"github.com/turnpike-gw/turnpike/internal/task"
	"github.com/turnpike-gw/turnpike/internal/task/taskhttp"
)

// buildTasks makes the task service and its HTTP surface (host protocols,
// /v1/tasks, artifacts).
func (a *App) buildTasks() {
	cfg := a.Config
	a.tasks = task.New(task.Deps{
		Store: a.Store, Billing: a.Billing, Router: a.Router, Generations: a.plugins,
		Client: a.Tracer.Client(newUpstreamClient()), Logger: a.Log, Limits: a.Limits, Plans: a.Plans, Guardrails: a.guardrails,
		Options: task.Options{
			PollInterval: cfg.PollInterval(), MaxFailures: cfg.TaskPollMaxFails,
			Timeout: time.Duration(cfg.TaskTimeoutMin) * time.Minute, RetryCount: cfg.RetryCount,
			PublicAddress:   a.publicAddress(),
			UpstreamTimeout: time.Duration(cfg.UpstreamTimeout) * time.Second, Node: a.plugins.Node(),
			MaxFileBytes: int64(cfg.MaxFileDownloadMB) << 20,
			Secret:       a.Config.CryptoSecret, AllowPrivateContent: cfg.AllowPrivateContent,
		},
	})
	a.taskHTTP = taskhttp.New(taskhttp.Deps{
		Core: a.tasks, Keys: a.Keys, Logger: a.Log, RootToken: cfg.RootToken, APIPrincipal: a.Admin.CheckSessionOrRoot,
		Options: taskhttp.Options{BodyLimit: cfg.BodyLimit(), ProtocolTimeout: time.Duration(cfg.ProtocolTimeout) * time.Second},
	})
}

// buildRelay makes the model surfaces on the services built before them.
func (a *App) buildRelay() {
	cfg := a.Config
	a.Relay = relay.New(relay.Deps{
		Keys: a.Keys, Billing: a.Billing, Router: a.Router, Client: newUpstreamClient(), H2CClient: newUpstreamH2CClient(), Adapters: providers.For,
		Codecs: map[protocol.Format]protocol.Codec{
			protocol.OpenAI: openai.Chat, protocol.Anthropic: anthropic.Messages, protocol.Gemini: gemini.Generate,
		},
		Embedder: gemini.Generate, TokenCounter: gemini.Generate, ResponsesAPI: responses.API, Completions: openai.Completions,
		Logger: a.Log, Metrics: relay.NewMetrics(a.registry), Session: a.Admin.SessionPrincipal, Hosts: a.taskHTTP,
		Responses: relay.NewResponseIndex(a.Store.Responses(), a.Log),
		Limits:    a.Limits, Plans: a.Plans, OnSettle: a.Notify.Spent, Tracer: a.Tracer, Guardrails: a.guardrails,
		Cache: a.responseCache(), Content: a.content,
		Options: relay.Options{
			RetryCount: cfg.RetryCount, BodyLimit: cfg.BodyLimit(), ModerationDefaultModel: cfg.ModerationDefaultModel,
			FirstByteTimeout: time.Duration(cfg.FirstByteTimeout) * time.Second,
			UpstreamTimeout:  time.Duration(cfg.UpstreamTimeout) * time.Second,
		},
	})
}

// responseCacheBytes bounds the answers one node keeps in memory when no
// Redis is shared (CONTRACT §22: bounded memory); entries are also bounded
// one by one by their model's or key's max_entry_kb.
const responseCacheBytes = 64 << 20

// responseCache is the response cache's store: Redis when nodes share one,
// so every node answers from the same entries, else this node's memory.
func (a *App) responseCache() *respcache.Cache {
	if a.redis != nil {
		return respcache.New(respcache.NewRedis(a.redis, billing.RedisKeyPrefix(a.redis)))
	}
	return respcache.New(respcache.NewMemory(responseCacheBytes))
}
