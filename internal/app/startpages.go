package app

import (
	"log/slog"

	"github.com/turnpike-gw/turnpike/internal/exepages"
)

// releaseStartupPages gives back the executable's pages that only
// start-up touched (package initialisation, migrations, the seed): about
// 25 MB of resident memory a serving gateway never reads again. What it
// does read faults back in from the page cache.
func releaseStartupPages(log *slog.Logger) {
	kb, err := exepages.Release()
	if err != nil {
		log.Debug("executable pages not released", "err", err)
		return
	}
	log.Debug("released the executable's start-up pages", "kb", kb)
}
