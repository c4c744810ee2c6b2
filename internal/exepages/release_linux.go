package exepages

import (
	"os"
	"syscall"
)

// Release drops the executable's read-only pages from this process's
// page tables (madvise MADV_DONTNEED, which for a private file mapping
// without copied pages means: read them from the file again when next
// touched) and returns how many kilobytes were resident in them. Call it
// once start-up is over; it is safe at any time, since no such page is
// ever written.
func Release() (int64, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	rs, err := releasable(f, exe)
	if err != nil {
		return 0, err
	}
	var kb int64
	for _, r := range rs {
		if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, uintptr(r.start), uintptr(r.end-r.start), syscall.MADV_DONTNEED); e != 0 {
			return kb, e
		}
		kb += r.rssKB
	}
	return kb, nil
}
