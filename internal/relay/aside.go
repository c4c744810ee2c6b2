package relay

// aside runs fn on a goroutine of its own and waits for it.
//
// A streamed call's handler goroutine stays parked for as long as its
// stream is open, and the runtime keeps the stack its deepest moment grew:
// it doubles a stack that runs out and halves it again only when less than
// a quarter is in use, which a parked pump's is not. Two moments of a call
// go much deeper than the pump: net/http writing the answer's headers (a
// 2.8 KB frame of its own) and settlement (billing, the usage row). Run on
// the handler's stack, either grows it from 8 to 16 KB for the life of the
// stream; run here, on a goroutine that ends at once, they leave the
// handler's stack as small as its pump (TestStackDepthOfACall).
//
// fn runs while the caller waits, so it may use the caller's state as if
// it ran on the caller's goroutine. A panic is raised again in the caller,
// where the server's recovery sees it (http.ErrAbortHandler included).
func aside(fn func()) {
	done := make(chan any, 1)
	go runAside(fn, done)
	if v := <-done; v != nil {
		panic(v)
	}
}

// runAside is aside's goroutine: it hands back fn's panic, or nil.
func runAside(fn func(), done chan<- any) {
	defer func() { done <- recover() }()
	fn()
}
