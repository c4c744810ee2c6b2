package app

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
)

// buildVCS is the commit a binary was built from and that commit's date.
// Builds without VCS stamping (-buildvcs=false, go run outside a checkout,
// a tarball) carry neither, so both may be empty.
type buildVCS struct {
	revision, time string
	modified       bool
}

// buildCommit and buildDate are set with -ldflags -X where the build has
// no VCS information to stamp (deploy/Dockerfile: its context has no .git).
var buildCommit, buildDate string

func readBuildVCS(read func() (*debug.BuildInfo, bool)) buildVCS {
	v := buildVCS{revision: known(buildCommit), time: known(buildDate)}
	info, ok := read()
	if !ok || info == nil {
		return v
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.revision = s.Value
		case "vcs.time":
			v.time = s.Value
		case "vcs.modified":
			v.modified = s.Value == "true"
		}
	}
	return v
}

func known(s string) string {
	if s == "unknown" {
		return ""
	}
	return s
}

// printVersion writes one line an operator can paste into a bug report.
func printVersion(w io.Writer, version string, v buildVCS) {
	commit, date := v.revision, v.time
	if commit == "" {
		commit = "unknown"
	} else if v.modified {
		commit += " (modified)"
	}
	if date == "" {
		date = "unknown"
	}
	fmt.Fprintf(w, "turnpike %s commit %s date %s\n", version, commit, date)
}

// startFacts names what an operator checks first after an upgrade: the
// database kind, its schema version and whether balances are shared
// through Redis.
func (a *App) startFacts() string {
	redis := "off"
	if a.Config.Redis != "" {
		redis = "on"
	}
	return fmt.Sprintf("database %s, schema version %d, redis %s", a.sql.Dialect(), a.schema, redis)
}

// freshDatabase reports a database this start created (it applied the
// first migration), which no older release can have seeded.
func (a *App) freshDatabase() bool {
	for _, m := range a.sql.Applied() {
		if m.Version == 1 {
			return true
		}
	}
	return false
}

// warnSecretless names, at start, what an import without secrets left
// unusable, so a half-broken gateway does not start in silence.
func (a *App) warnSecretless(ctx context.Context) {
	c, err := a.sql.CountSecretless(ctx)
	if err != nil {
		a.Log.Warn("could not count records without secrets", "err", err)
		return
	}
	if c.Users > 0 {
		a.Log.Warn("users without a password (imported without secrets): they cannot sign in until one is set (turnpike user reset-password)", "users", c.Users)
	}
	if c.Tokens > 0 {
		a.Log.Warn("API keys without a secret (imported without secrets): they authenticate nothing until rotated (turnpike token rotate)", "keys", c.Tokens)
	}
	if c.Channels > 0 {
		a.Log.Warn("channels without a provider key (imported without secrets, or never given one): set one before they can serve", "channels", c.Channels)
	}
}
