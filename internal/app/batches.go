package app

import (
	"context"
	"time"

	"github.com/turnpike-gw/turnpike/internal/auth"
	"github.com/turnpike-gw/turnpike/internal/batch"
	"github.com/turnpike-gw/turnpike/internal/batch/s3blobs"
	"github.com/turnpike-gw/turnpike/internal/protocol/anthropic"
	"github.com/turnpike-gw/turnpike/internal/protocol/openai"
	"github.com/turnpike-gw/turnpike/internal/providers"
	"github.com/turnpike-gw/turnpike/internal/relay"
)

// buildBatches wires files and batches: their records in the store, and
// their lines run in this process through the relay's one driver.
func (a *App) buildBatches() {
	cfg := a.Config
	var blobs batch.Blobs
	if f := cfg.Files; f.Store == "s3" {
		blobs = s3blobs.New(s3blobs.Options{Endpoint: f.Endpoint, Bucket: f.Bucket, AccessKey: f.AccessKey,
			SecretKey: f.SecretKey, Region: f.Region, Client: newUpstreamClient()})
	}
	a.batches = batch.New(batch.Deps{Blobs: blobs,
		Files: a.sql.Files(), Batches: a.sql.Batches(), Holds: a.sql.Holds(), Keys: a.Keys, Billing: a.Billing, Router: a.Router,
		Limits: a.Limits, Plans: a.Plans, Client: a.Tracer.Client(newUpstreamClient()), Adapters: providers.For, OpenAI: openai.Chat, Messages: anthropic.Messages, Logger: a.Log,
		Lines: func(ctx context.Context, p *auth.Principal, endpoint string, body []byte, admitted time.Time, take batch.LineTake) batch.LineResult {
			r := a.Relay.RunLine(ctx, p, endpoint, body, admitted, relay.LineTake(take))
			return batch.LineResult{Status: r.Status, Body: r.Body, OK: r.OK, Model: r.Model, Usage: r.Usage, Quota: r.Quota,
				Cost: r.Cost, Reserved: r.Reserved}
		},
		Options: batch.Options{
			MaxFileBytes: cfg.Files.MaxBytes(), BodyLimit: cfg.BodyLimit(), PollInterval: cfg.PollInterval(), Node: a.Billing.Node(),
			PublicAddress: a.Config.ServerAddress,
		},
	})
}
