package store

// HoldEnd is how a hold ended as far as the ledger knows: Settled with its
// charge (the settle entry's used quota, alone or netted with the
// reserve), or Kept when it is open and handed to a durable record. A hold
// neither settled nor kept was refunded, released, is still open under
// its owner, or never reached the database.
type HoldEnd struct {
	Settled bool
	Charge  int64
	Kept    bool
}
