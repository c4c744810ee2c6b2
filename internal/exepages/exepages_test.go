package exepages

import (
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

const sampleSmaps = `00400000-01d53000 r-xp 00000000 fe:00 123 /opt/turnpike/turnpike
Size:              25932 kB
Rss:               15220 kB
Anonymous:             0 kB
01d53000-03e15000 r--p 01953000 fe:00 123 /opt/turnpike/turnpike
Rss:               23812 kB
Anonymous:             0 kB
03e15000-0401e000 rw-p 03a15000 fe:00 123 /opt/turnpike/turnpike
Rss:                 740 kB
Anonymous:           312 kB
04100000-04200000 r--p 03c00000 fe:00 123 /opt/turnpike/turnpike
Rss:                  64 kB
Anonymous:             4 kB
7f0000000000-7f0000100000 r-xp 00000000 fe:00 77 /usr/lib/x86_64-linux-gnu/libc.so.6
Rss:                 968 kB
Anonymous:             0 kB
7f0000200000-7f0000300000 rw-p 00000000 00:00 0
Rss:                1024 kB
Anonymous:          1024 kB
7f0000400000-7f0000500000 r--p 00000000 fe:00 124 /opt/turnpike/turnpike-old (deleted)
Rss:                  64 kB
Anonymous:             0 kB
`

func TestOnlyTheExecutablesReadOnlyUncopiedMappingsAreReleasable(t *testing.T) {
	got, err := releasable(strings.NewReader(sampleSmaps), "/opt/turnpike/turnpike")
	if err != nil {
		t.Fatal(err)
	}
	want := []region{{start: 0x400000, end: 0x1d53000, rssKB: 15220}, {start: 0x1d53000, end: 0x3e15000, rssKB: 23812}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("releasable regions %+v, want the text and read-only data only %+v", got, want)
	}
}

func TestAnotherFileIsNeverReleasable(t *testing.T) {
	got, err := releasable(strings.NewReader(sampleSmaps), "/usr/bin/other")
	if err != nil || len(got) != 0 {
		t.Fatalf("regions %+v (err %v) for a file that is not mapped", got, err)
	}
}

// fib is code the process runs after its pages were released.
func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func TestTheProcessRunsOnAfterReleasingItsExecutablesPages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("pages are listed on Linux only")
	}
	kb, err := Release()
	if err != nil {
		t.Fatal(err)
	}
	if kb <= 0 {
		t.Fatalf("released %d kB: the test binary's own code was resident", kb)
	}
	runtime.GC() // walks every stack with the function tables just dropped
	if fib(20) != 6765 {
		t.Fatal("code read back from the file computes differently")
	}
	if _, err := os.ReadFile("/proc/self/status"); err != nil {
		t.Fatal(err)
	}
}
