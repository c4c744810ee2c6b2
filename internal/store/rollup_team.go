package store

// teamOf is the team a row's bucket is kept under: the team its user was
// in when the call was made (0: none).
func teamOf(l UsageLog) int64 { return l.TeamID }
