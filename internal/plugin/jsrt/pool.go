package jsrt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/grafana/sobek"
)

// Defaults of PoolOptions.
const (
	DefaultPoolSize    = 8
	DefaultHookTimeout = 5 * time.Second
)

// maxHookMessageBytes caps the error text a hook can hand back: it may reach
// clients and logs, so it must stay readable and bounded.
const maxHookMessageBytes = 1024

var (
	// ErrPoolClosed is returned by calls on or waiting for a closed pool.
	ErrPoolClosed = errors.New("jsrt: pool closed")
	// ErrHookTimeout marks a hook stopped by its deadline. Errors wrapping it
	// also match context.DeadlineExceeded.
	ErrHookTimeout = errors.New("jsrt: hook deadline exceeded")
	errInterrupted = errors.New("jsrt: hook interrupted")
)

// HookError is a JavaScript exception thrown by a hook, or a hook result that
// is not a JSON-like value. Message is the thrown Error's message (or the
// string form of another thrown value), at most about 1 KiB.
type HookError struct {
	Hook    string // dotted path of the hook
	Name    string // JavaScript error name such as "TypeError"; empty if unknown
	Message string
}

// Error formats the hook and its message.
func (e *HookError) Error() string {
	return fmt.Sprintf("plugin hook %s: %s", e.Hook, e.Message)
}

// PoolOptions configure a Pool. Zero values take the defaults.
type PoolOptions struct {
	Size        int           // runtimes, and so concurrent calls; default 8
	HookTimeout time.Duration // per-call deadline; default 5 s
	Logger      *slog.Logger  // receives plugin console output; default discards
	// MemoryBudget is how far the process heap may grow during one call
	// before the runtime is stopped (memwatch.go); default 512 MiB.
	MemoryBudget uint64
}

// Pool runs a program's hooks on a bounded set of lazily created runtimes.
type Pool struct {
	prog      *Program
	timeout   time.Duration
	memBudget uint64
	env       *hostEnv
	slots     chan struct{}
	idle      chan *vm
	done      chan struct{}
	closeOnce sync.Once
}

// NewPool creates a pool for prog. No runtime is created until the first call.
func NewPool(prog *Program, opts PoolOptions) *Pool {
	if opts.Size <= 0 {
		opts.Size = DefaultPoolSize
	}
	if opts.HookTimeout <= 0 {
		opts.HookTimeout = DefaultHookTimeout
	}
	if opts.MemoryBudget == 0 {
		opts.MemoryBudget = memoryBudget
	}
	return &Pool{
		prog:      prog,
		timeout:   opts.HookTimeout,
		memBudget: opts.MemoryBudget,
		env:       defaultEnv(opts.Logger),
		slots:     make(chan struct{}, opts.Size),
		idle:      make(chan *vm, opts.Size),
		done:      make(chan struct{}),
	}
}

// Close stops the pool: waiting and later calls fail with ErrPoolClosed, calls
// in flight finish, and no runtime is kept.
func (p *Pool) Close() {
	p.closeOnce.Do(func() {
		close(p.done)
		for {
			select {
			case <-p.idle:
			default:
				return
			}
		}
	})
}

// Call runs the exported function at path ("buildSubmitRequest",
// "native.decodeSubmit", "protocols.std_video.render") with deep-copied,
// frozen arguments and returns its result as a plain Go value. It waits for a
// free runtime while ctx allows, and the call itself runs under the smaller of
// the hook timeout and ctx's deadline.
func (p *Pool) Call(ctx context.Context, path string, args ...any) (any, error) {
	if err := p.acquire(ctx); err != nil {
		return nil, err
	}
	defer func() { <-p.slots }()
	callCtx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	v, err := p.take(callCtx, path)
	if err != nil {
		return nil, err
	}
	res, keep, err := p.run(callCtx, v, path, args)
	if keep {
		p.put(v)
	}
	return res, err
}

func (p *Pool) acquire(ctx context.Context) error {
	select {
	case <-p.done:
		return ErrPoolClosed
	default:
	}
	select {
	case p.slots <- struct{}{}:
		return nil
	case <-p.done:
		return ErrPoolClosed
	case <-ctx.Done():
		return fmt.Errorf("jsrt: waiting for a runtime: %w", context.Cause(ctx))
	}
}

// take returns an idle runtime or creates one; creating evaluates the module
// within the call's deadline.
func (p *Pool) take(ctx context.Context, path string) (*vm, error) {
	select {
	case v := <-p.idle:
		return v, nil
	default:
	}
	v, err := newVM(ctx, p.prog, p.env)
	if err != nil && ctx.Err() != nil {
		return nil, p.interruptError(ctx, path)
	}
	return v, err
}

func (p *Pool) put(v *vm) {
	select {
	case <-p.done:
		return
	default:
	}
	select {
	case p.idle <- v:
	default:
	}
}

// run calls the hook on v. keep reports whether v may be reused: a runtime
// that was interrupted, overflowed its stack or panicked is discarded.
func (p *Pool) run(ctx context.Context, v *vm, path string, args []any) (res any, keep bool, err error) {
	v.console.reset()
	stop := context.AfterFunc(ctx, func() { v.rt.Interrupt(errInterrupted) })
	stopWatch := watchMemory(v.rt, p.memBudget)
	res, keep, err = v.invokeSafely(path, args)
	if stopWatch() {
		stop()
		return nil, false, &HookError{Hook: path, Name: "RangeError", Message: errMemoryBudget.Error()}
	}
	if !stop() {
		// The interrupt fired (or is firing): the runtime may carry a pending
		// interrupt flag or half-updated state, so it never goes back.
		keep = false
		if err != nil {
			return nil, false, p.interruptError(ctx, path)
		}
	}
	var interrupted *sobek.InterruptedError
	if errors.As(err, &interrupted) {
		return nil, false, p.interruptError(ctx, path)
	}
	return res, keep, err
}

func (p *Pool) interruptError(ctx context.Context, path string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("plugin hook %s: %w: %w", path, ErrHookTimeout, context.DeadlineExceeded)
	}
	return fmt.Errorf("plugin hook %s interrupted: %w", path, context.Cause(ctx))
}

// invokeSafely runs the hook and converts its outcome; a Go panic anywhere in
// conversion or in a host utility becomes an error instead of a crash.
func (v *vm) invokeSafely(path string, args []any) (res any, keep bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, keep, err = nil, false, fmt.Errorf("jsrt: hook %s: internal failure: %v", path, r)
		}
	}()
	var fn sobek.Callable
	if ex := v.rt.Try(func() { fn, err = v.lookup(path) }); ex != nil {
		return nil, true, hookError(v.rt, path, ex)
	}
	if err != nil {
		return nil, true, err
	}
	jsArgs, err := v.arguments(args)
	if err != nil {
		return nil, true, fmt.Errorf("jsrt: hook %s: %w", path, err)
	}
	ret, err := fn(sobek.Undefined(), jsArgs...)
	if err != nil {
		return nil, classifyKeep(err), hookError(v.rt, path, err)
	}
	out, err := exportValue(v.rt, ret, resultLimits)
	if err != nil {
		return nil, classifyKeep(err), hookError(v.rt, path, err)
	}
	return out, true, nil
}

func (v *vm) arguments(args []any) ([]sobek.Value, error) {
	im := &importer{rt: v.rt, freeze: v.freeze}
	out := make([]sobek.Value, len(args))
	for i, a := range args {
		val, err := im.toJS(a, 0)
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i+1, err)
		}
		out[i] = val
	}
	return out, nil
}

// classifyKeep reports whether a runtime stays usable after err: ordinary
// exceptions unwind cleanly, uncatchable ones (interrupt, stack overflow) may
// not.
func classifyKeep(err error) bool {
	var interrupted *sobek.InterruptedError
	var overflow *sobek.StackOverflowError
	return !errors.As(err, &interrupted) && !errors.As(err, &overflow)
}

// hookError turns a failure of plugin code into a *HookError; interrupts pass
// through untouched so the pool can classify them.
func hookError(rt *sobek.Runtime, path string, err error) error {
	var interrupted *sobek.InterruptedError
	if errors.As(err, &interrupted) {
		return err
	}
	var overflow *sobek.StackOverflowError
	if errors.As(err, &overflow) {
		return &HookError{Hook: path, Name: "RangeError", Message: "maximum call stack size exceeded"}
	}
	var ex *sobek.Exception
	if errors.As(err, &ex) {
		name, msg := thrown(rt, ex.Value())
		return &HookError{Hook: path, Name: truncateText(name, 64), Message: truncateText(msg, maxHookMessageBytes)}
	}
	var ve *valueError
	if errors.As(err, &ve) {
		return &HookError{Hook: path, Name: "TypeError", Message: truncateText("invalid result: "+ve.Error(), maxHookMessageBytes)}
	}
	return err
}

// truncateText cuts s to at most max bytes on a rune boundary.
func truncateText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const ellipsis = "…"
	cut := max - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
