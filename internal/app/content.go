package app

import (
	"github.com/turnpike-gw/turnpike/internal/archive"
	"github.com/turnpike-gw/turnpike/internal/contentlog"
)

// newContent is content logging (CONTRACT §20): in the usage archive's
// bucket when logs.archive.s3 is set, through the archive's own bucket
// client, else in the database.
func (a *App) newContent() *contentlog.Service {
	o := contentlog.Options{Store: a.Store.LogContents(), Log: a.Log}
	if r, ok := archive.NewReader(a.Config.Logs); ok {
		o.Bucket, o.Prefix, o.IsNotFound = r.Bucket, r.Prefix, r.IsNotFound
	}
	return contentlog.New(o)
}
