package jsrt

import (
	"errors"
	"runtime/metrics"
	"sync/atomic"
	"time"

	"github.com/grafana/sobek"
)

// memoryBudget is how far the process heap may grow while one hook call or
// module evaluation runs before that runtime is interrupted. Go has no
// per-goroutine accounting, so the heap of the whole process is watched:
// the budget is generous enough that other requests' allocations during a
// millisecond hook do not trip it, and small enough that a loop doubling a
// string is stopped long before the machine runs out of memory.
const memoryBudget = 512 << 20

// memorySampleEvery is the watchdog's period. Building a string of a few
// hundred megabytes takes longer, so growth is seen between two steps.
const memorySampleEvery = 5 * time.Millisecond

const heapMetric = "/memory/classes/heap/objects:bytes"

// errMemoryBudget is the interrupt value of a runtime stopped for memory.
var errMemoryBudget = errors.New("the plugin used more memory than the sandbox allows")

// watchMemory interrupts rt when the heap grows more than budget bytes
// above its size now. The returned stop ends the watch and reports whether
// it fired.
func watchMemory(rt *sobek.Runtime, budget uint64) (stop func() bool) {
	base := heapBytes()
	done := make(chan struct{})
	var fired atomic.Bool
	go func() {
		t := time.NewTicker(memorySampleEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if heapBytes() > base+budget {
					fired.Store(true)
					rt.Interrupt(errMemoryBudget)
					return
				}
			}
		}
	}()
	return func() bool {
		close(done)
		return fired.Load()
	}
}

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
