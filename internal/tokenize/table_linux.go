package tokenize

import (
	"runtime"
	"syscall"
)

// tableMemory maps size bytes of anonymous memory for t's block, outside
// the Go heap, and unmaps it once t is unreachable (only tests build tables
// that die; the gateway's live as long as the process).
func tableMemory(t *rankTable, size int) ([]byte, error) {
	mem, err := syscall.Mmap(-1, 0, max(size, 1), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, err
	}
	runtime.AddCleanup(t, func(m []byte) { _ = syscall.Munmap(m) }, mem)
	return mem[:size], nil
}

// sealTable makes the block read-only: a stray write into a table shared
// by every count faults instead of corrupting counts.
func sealTable(mem []byte) error {
	if len(mem) == 0 {
		return nil
	}
	return syscall.Mprotect(mem, syscall.PROT_READ)
}
