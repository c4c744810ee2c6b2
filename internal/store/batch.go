package store

import (
	"context"
	"encoding/json"
)

// File is an uploaded file's record. Its bytes live apart from it (in
// file chunks or an object store), so listing files never reads them.
// Times are Unix seconds, as the OpenAI file object reports them.
type File struct {
	ID        int64
	PublicID  string
	UserID    int64
	Filename  string
	Purpose   string
	Bytes     int64
	CreatedAt int64
}

// FileRepo keeps file records and the chunks of the files kept in the
// database. Chunks are keyed by the file's public id, so they can be
// written before the record exists and a half-written upload never shows.
type FileRepo interface {
	InsertFile(ctx context.Context, f *File) error
	// GetFile returns a file by public id; a missing one is ErrNotFound.
	GetFile(ctx context.Context, publicID string) (*File, error)
	// ListFiles returns a user's files newest first, at most limit, of
	// purpose when it is not empty.
	ListFiles(ctx context.Context, userID int64, purpose string, limit int) ([]*File, error)
	// DeleteFile removes the record (ErrNotFound when there is none).
	DeleteFile(ctx context.Context, publicID string) error
	// PutChunk stores chunk seq (from 0) of a file's bytes.
	PutChunk(ctx context.Context, fileID string, seq int, data []byte) error
	// Chunk returns chunk seq; past the last one it is ErrNotFound.
	Chunk(ctx context.Context, fileID string, seq int) ([]byte, error)
	// DeleteChunks removes every chunk of a file.
	DeleteChunks(ctx context.Context, fileID string) error
}

// Batch statuses, as the OpenAI batch object names them.
const (
	BatchValidating = "validating"
	BatchInProgress = "in_progress"
	BatchFinalizing = "finalizing"
	BatchCompleted  = "completed"
	BatchFailed     = "failed"
	BatchExpired    = "expired"
	BatchCancelling = "cancelling"
	BatchCancelled  = "cancelled"
)

// Batch is one batch of requests, run by the gateway line by line or by a
// provider's batch API. Times are Unix seconds (zero: unset), except the
// lease, which is in milliseconds like the task poller's.
type Batch struct {
	ID       int64
	PublicID string
	// Kind is "openai" (/v1/batches) or "messages" (/v1/messages/batches).
	Kind             string
	UserID           int64
	TokenID          int64
	Group            string
	Endpoint         string
	InputFileID      string
	CompletionWindow string
	Metadata         json.RawMessage
	Status           string
	// Mode is "gateway" (the gateway runs the lines) or "provider".
	Mode      string
	ChannelID int64
	// Upstream is the provider batch's state (its ids), owned by the
	// batch service.
	Upstream     json.RawMessage
	Errors       json.RawMessage
	OutputFileID string
	ErrorFileID  string
	Total        int
	Completed    int
	Failed       int
	// Holds are the batch's reservations, one per model (JSON the batch
	// service owns); Billed is set once they were all ended.
	Holds  json.RawMessage
	Billed bool
	// Charged is what the batch cost, once billed.
	Charged      int64
	LeaseOwner   string
	LeaseUntil   int64
	NextPollAt   int64
	CreatedAt    int64
	InProgressAt int64
	FinalizingAt int64
	CompletedAt  int64
	FailedAt     int64
	ExpiredAt    int64
	CancellingAt int64
	CancelledAt  int64
	ExpiresAt    int64
}

// BatchLine is the outcome of one line a batch ran: its answer (or error)
// and what it cost. Line numbers start at 1.
type BatchLine struct {
	BatchID      int64
	Line         int
	CustomID     string
	Model        string
	OK           bool
	Status       int
	Body         string
	InputTokens  int
	OutputTokens int
	Quota        int64
	// Cost is a charged line's exact cost in list dollars before the
	// group ratio (a big.Rat's string); empty for a line from before
	// costs were kept, whose Quota is then its charge.
	Cost string
}

// BatchRepo keeps batches and their line outcomes. Status changes are
// conditional, so a cancel and the runner never overwrite each other.
type BatchRepo interface {
	InsertBatch(ctx context.Context, b *Batch) error
	GetBatch(ctx context.Context, publicID string) (*Batch, error)
	// ListBatches returns a user's batches of kind newest first, at most
	// limit, older than the batch after (a public id) when it is set.
	ListBatches(ctx context.Context, userID int64, kind, after string, limit int) ([]*Batch, error)
	// SaveBatch writes the batch's progress (counts, files, errors,
	// upstream state, holds, next poll) while its status is still
	// b.Status; false when it moved meanwhile.
	SaveBatch(ctx context.Context, b *Batch) (bool, error)
	// MoveBatch changes the status from one of from to to, stamping the
	// status's time column with at; false when the batch was in none.
	MoveBatch(ctx context.Context, id int64, from []string, to string, at int64) (bool, error)
	// MarkBilled sets Billed, with what the batch was charged, once;
	// false when it was set already.
	MarkBilled(ctx context.Context, id, charged int64) (bool, error)
	// Active returns up to limit batches that still need work (not
	// terminal, or terminal and not billed), that no live lease holds and
	// whose next poll (milliseconds) has come.
	Active(ctx context.Context, now int64, limit int) ([]*Batch, error)
	// LeaseBatch claims a batch for owner until until (milliseconds);
	// false when another owner holds a live lease.
	LeaseBatch(ctx context.Context, id int64, owner string, now, until int64) (bool, error)
	// PutLine records a line's outcome once; a second outcome of the same
	// line is ignored (false).
	PutLine(ctx context.Context, l *BatchLine) (bool, error)
	// Lines returns the outcomes of lines after afterLine, in line order,
	// at most limit.
	Lines(ctx context.Context, batchID int64, afterLine, limit int) ([]*BatchLine, error)
}
