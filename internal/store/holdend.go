package store

// HoldEnd is how a hold ended as far as the ledger knows: Settled with its
// charge (the settle entry's used quota, alone or netted with the
// reserve), Kept when it is open and handed to a durable record, Released
// when the sweep refunded it (<hold>:release). A hold none of these was
// refunded by its owner, is still open under its owner, or never reached
// the database.
type HoldEnd struct {
	Settled  bool
	Charge   int64
	Kept     bool
	Released bool
}
