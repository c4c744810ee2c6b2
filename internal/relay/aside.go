package relay

import (
	"sync"
	"sync/atomic"
)

// aside runs fn on another goroutine and waits for it.
//
// A streamed call's handler goroutine stays parked for as long as its
// stream is open, and the runtime keeps the stack its deepest moment grew:
// it doubles a stack that runs out and halves it again only when less than
// a quarter is in use, which a parked pump's is not. A few moments of a call
// go much deeper than the pump: net/http writing the answer's headers (a
// 2.8 KB frame of its own), the dialects' JSON path lookups of usage, of the
// first text and of the finish reason, and settlement (billing, the usage
// row). Run on the handler's stack, any of them grows it from 8 to 16 KB for
// the life of the stream; run aside, they leave the handler's stack as
// small as its pump (TestStackDepthOfACall).
//
// fn runs while the caller waits, so it may use the caller's state as if
// it ran on the caller's goroutine. A panic is raised again in the caller,
// where the server's recovery sees it (http.ErrAbortHandler included).
//
// The goroutines are kept waiting for the next call (up to maxAsideWorkers
// of them): one started per call would begin at the runtime's starting
// stack size and grow it by copying every time (about 5 µs a call in
// BenchmarkRelayChatRegular), where a kept one has grown once. More calls at
// once than that start goroutines of their own.
func aside(fn func()) {
	a := asideCalls.Get().(*asideCall)
	a.fn = fn
	a.handOff()
}

// asideOn is aside for fn(arg): a function that is no closure and an arg
// that is already a pointer on the heap cost no allocation, where a closure
// handed aside escapes to the heap with every variable it shares with its
// caller (a stream's few aside moments made four of its allocations).
func asideOn(fn func(any), arg any) {
	a := asideCalls.Get().(*asideCall)
	a.on, a.arg = fn, arg
	a.handOff()
}

func (a *asideCall) handOff() {
	select {
	case asideQueue <- a: // a kept goroutine was waiting
	default:
		if asideWorkers.Add(1) <= maxAsideWorkers {
			go keepAside(a)
		} else {
			asideWorkers.Add(-1)
			go a.run()
		}
	}
	v := <-a.done
	a.fn, a.on, a.arg = nil, nil, nil
	asideCalls.Put(a)
	if v != nil {
		panic(v)
	}
}

// maxAsideWorkers bounds the goroutines kept waiting: each holds a stack
// (8 KB once grown, halved by the collector while it waits).
const maxAsideWorkers = 64

var (
	asideQueue   = make(chan *asideCall)
	asideWorkers atomic.Int32
	asideCalls   = sync.Pool{New: func() any { return &asideCall{done: make(chan any, 1)} }}
)

// asideCall is one call handed aside, fn() or on(arg); done hears its
// panic, or nil.
type asideCall struct {
	fn   func()
	on   func(any)
	arg  any
	done chan any
}

func (a *asideCall) run() {
	defer func() { a.done <- recover() }()
	if a.on != nil {
		a.on(a.arg)
		return
	}
	a.fn()
}

// keepAside runs a, then every call handed to it, for the life of the
// process.
func keepAside(a *asideCall) {
	defer asideWorkers.Add(-1) // only if fn ended the goroutine (Goexit)
	for {
		a.run()
		a = <-asideQueue
	}
}
