// Package exepages gives back the pages of the gateway's own executable
// that only its start-up touched.
//
// The executable is large (tens of MB of code, read-only data and the
// function tables the runtime keeps), and everything that runs once —
// package initialisation, migrations, the seed — touches pages all over
// it. The kernel maps them in 64 KB pieces around each touch, and they
// then count in the process's resident memory for its whole life,
// although a serving gateway uses a fraction of them: measured at 41 MB
// of file pages right after start against 33 MB for the bare proxy built
// into the same file. Release unmaps the read-only ones once start-up is
// over; the pages a serving gateway does use fault back in, from the page
// cache, the first time they are touched again.
package exepages

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// region is one mapping of the executable that may be released.
type region struct {
	start, end uint64
	rssKB      int64
}

// releasable reads /proc/<pid>/smaps and returns the mappings of the file
// exe that are read-only and hold no anonymous (copied-on-write) page:
// their every page is the file's own, so dropping it loses nothing. A
// writable mapping (.data), or a read-only one whose pages were written
// before it was made read-only (relocations of a position-independent
// build), is never released.
func releasable(smaps io.Reader, exe string) ([]region, error) {
	var out []region
	var cur *region
	ok := false
	flush := func() {
		if cur != nil && ok {
			out = append(out, *cur)
		}
		cur, ok = nil, false
	}
	sc := bufio.NewScanner(smaps)
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) >= 5 && strings.Contains(f[0], "-") && len(f[1]) == 4 {
			flush()
			lo, hi, _ := strings.Cut(f[0], "-")
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			path := strings.Join(f[5:], " ")
			if err1 == nil && err2 == nil && path == exe && f[1][0] == 'r' && f[1][1] == '-' {
				cur, ok = &region{start: start, end: end}, true
			}
			continue
		}
		if cur == nil || len(f) < 2 {
			continue
		}
		kb, err := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "Rss:":
			cur.rssKB = kb
		case "Anonymous:":
			if err != nil || kb != 0 {
				ok = false
			}
		}
	}
	flush()
	return out, sc.Err()
}
