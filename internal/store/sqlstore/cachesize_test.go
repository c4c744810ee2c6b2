package sqlstore

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// TestEveryPooledConnectionKeeps128KiBOfPagesAtRest holds the page cache
// at rest (cache_size in sqlitePragmas) on the first connection and on
// ones the pool opens while others are busy: with SQLite's allocator
// keeping about the peak of all caches at once, each KiB here is held
// about twice over per connection under load.
func TestEveryPooledConnectionKeeps128KiBOfPagesAtRest(t *testing.T) {
	ctx := context.Background()
	st, err := OpenStore(ctx, "sqlite:"+filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var conns []*sql.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for _, name := range []string{"the first connection", "a second, opened while the first is held", "a third"} {
		c, err := st.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var kib int
		if err := c.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&kib); err != nil {
			t.Fatal(err)
		}
		if kib != -128 {
			t.Errorf("%s: cache_size = %d, want -128 (128 KiB)", name, kib)
		}
	}
}
