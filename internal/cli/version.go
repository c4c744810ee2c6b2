package cli

import (
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
