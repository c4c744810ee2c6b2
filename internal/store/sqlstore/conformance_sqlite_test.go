package sqlstore_test

import (
	"context"
	"testing"

	"github.com/turnpike-gw/turnpike/internal/store"
	"github.com/turnpike-gw/turnpike/internal/store/sqlitetest"
	"github.com/turnpike-gw/turnpike/internal/store/sqlstore"
	"github.com/turnpike-gw/turnpike/internal/store/storetest"
)

// TestConformanceSQLite runs the suite on a migrated copy per subtest
// (sqlitetest), as the PostgreSQL and MySQL suites empty one migrated
// database (emptiedStores): each subtest starts from exactly a freshly
// migrated database, without paying for the migrations, which the race
// pass spent most of this suite's time on. It is an external test package
// because sqlitetest imports this one.
func TestConformanceSQLite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := sqlstore.Open(context.Background(), sqlitetest.DSN(t))
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
