package app

import "github.com/turnpike-gw/turnpike/internal/contentlog"

// newContent is content logging (CONTRACT §20): in the usage archive's
// bucket when logs.archive.s3 is set, else in the database.
func (a *App) newContent() *contentlog.Service {
	return contentlog.FromConfig(a.Config.Logs, a.Store.LogContents(), a.Log)
}
