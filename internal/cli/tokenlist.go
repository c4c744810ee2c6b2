package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/turnpike-gw/turnpike/internal/store"
)

// graceFlag is a rotation grace: a Go duration (10m, 36h) or whole days
// (8d), the unit operators think in for a key handed to another team.
type graceFlag struct{ d time.Duration }

func (g *graceFlag) String() string { return g.d.String() }

func (g *graceFlag) Set(v string) error {
	d, err := parseGrace(v)
	if err != nil {
		return err
	}
	g.d = d
	return nil
}

func parseGrace(v string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.ParseFloat(days, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("grace %q: want a duration such as 10m, 36h or 8d", v)
		}
		return time.Duration(n * float64(24*time.Hour)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("grace %q: want a duration such as 10m, 36h or 8d", v)
	}
	return d, nil
}

// allTokens lists every API key, page by page.
func allTokens(ctx context.Context, st store.Store) ([]store.Token, error) {
	var out []store.Token
	for page := 1; ; page++ {
		ts, total, err := st.Tokens().ListFiltered(ctx, store.TokenFilter{}, store.Page{Page: page, PageSize: 500})
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
		if len(ts) == 0 || len(out) >= total {
			return out, nil
		}
	}
}

// resolveToken finds the key an operator named by its id or its name. A
// name several users gave their keys is refused with the ids to choose.
func resolveToken(ctx context.Context, st store.Store, ref string) (int64, error) {
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil && id > 0 {
		return id, nil
	}
	ts, err := allTokens(ctx, st)
	if err != nil {
		return 0, err
	}
	var ids []string
	var found int64
	for _, t := range ts {
		if t.Name == ref {
			found = t.ID
			ids = append(ids, strconv.FormatInt(t.ID, 10))
		}
	}
	switch len(ids) {
	case 0:
		return 0, fmt.Errorf("no API key with id or name %q (turnpike token list shows them)", ref)
	case 1:
		return found, nil
	}
	return 0, fmt.Errorf("%d API keys are named %q (ids %s): give the id", len(ids), ref, strings.Join(ids, ", "))
}

// listTokens prints every API key without its secret: id, name, owner,
// status and the masked key.
func listTokens(ctx context.Context, st store.Store, stdout io.Writer) error {
	ts, err := allTokens(ctx, st)
	if err != nil {
		return err
	}
	owners := map[int64]string{}
	fmt.Fprintf(stdout, "%-6s %-24s %-16s %-9s %s\n", "ID", "NAME", "USER", "STATUS", "KEY")
	for _, t := range ts {
		if _, ok := owners[t.UserID]; !ok {
			owners[t.UserID] = strconv.FormatInt(t.UserID, 10)
			if u, err := st.Users().Get(ctx, t.UserID); err == nil {
				owners[t.UserID] = u.Username
			}
		}
		fmt.Fprintf(stdout, "%-6d %-24s %-16s %-9s %s\n", t.ID, t.Name, owners[t.UserID], t.Status, t.KeyMasked)
	}
	return nil
}
