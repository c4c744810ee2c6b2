package sqlstore

import (
	"context"
	"fmt"
	"os"
)

// Check connects to the database dsn names and closes it again, without
// applying migrations, so an operator can test an address while nodes run.
func Check(ctx context.Context, dsn string) error {
	t, err := parseDSN(dsn)
	if err != nil {
		return err
	}
	if t.dir != "" { // serve would create it; so does the check
		if err := os.MkdirAll(t.dir, 0o750); err != nil {
			return fmt.Errorf("sqlstore: create database directory: %w", err)
		}
	}
	db, err := openDB(t)
	if err != nil {
		return fmt.Errorf("sqlstore: open %s: %w", t.dialect, err)
	}
	defer db.Close()
	if err := db.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlstore: connect to %s: %w", t.dialect, err)
	}
	return nil
}
