package loadtest

import (
	"os"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		want    time.Duration
		wantErr bool
	}{
		{name: "adds user and system ticks", raw: "4242 (turnpike-load) S 1 4242 4242 0 -1 4194560 900 0 0 0 150 25 0 0 20 0 8 0 100 0 0",
			want: 1750 * time.Millisecond},
		{name: "counts fields after a name holding spaces and parentheses", raw: "7 (a) b (c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0",
			want: 70 * time.Millisecond},
		{name: "accepts the trailing newline of the real file", raw: "1 (x) S 0 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0\n", want: 20 * time.Millisecond},
		{name: "rejects a text without a command name", raw: "1 x S 0 1 1 0 -1 0 0 0 0 0 1 1", wantErr: true},
		{name: "rejects a truncated line", raw: "1 (x) S 0 1 1 0 -1 0 0 0 0 0 1", wantErr: true},
		{name: "rejects a non-numeric utime", raw: "1 (x) S 0 1 1 0 -1 0 0 0 0 0 u 1 0", wantErr: true},
		{name: "rejects a negative stime", raw: "1 (x) S 0 1 1 0 -1 0 0 0 0 0 1 -1 0", wantErr: true},
		{name: "rejects tick counts that overflow a duration", raw: "1 (x) S 0 1 1 0 -1 0 0 0 0 0 4611686018427387903 0 0", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProcStat([]byte(tt.raw))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestProcessCPUReadsTheRunningProcess(t *testing.T) {
	// Spin until the kernel has counted a tick: on a loaded machine a
	// fixed stretch of wall time may not be scheduled at all.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		cpu, err := ProcessCPU(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if cpu > 0 {
			return
		}
	}
	t.Error("CPU of a process that spun for 10 s is still zero")
}

func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("4242 (turnpike-load) S 1 4242 4242 0 -1 4194560 900 0 0 0 150 25 0 0 20 0 8 0 100 0 0\n"))
	f.Add([]byte("7 (a) b (c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0"))
	f.Add([]byte("1 (x) S 0 1 1 0 -1 0 0 0 0 0 99999999999999999999 1"))
	f.Add([]byte(")"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := ParseProcStat(raw)
		if err == nil && d < 0 {
			t.Fatalf("negative CPU time %v from %q", d, raw)
		}
		if err != nil && d != 0 {
			t.Fatalf("error %v with a non-zero result %v", err, d)
		}
	})
}

func TestParseRSSReadsTheResidentSetInBytes(t *testing.T) {
	cases := []struct {
		name, in string
		want     int64
		ok       bool
	}{
		{"status file", "Name:\tx\nVmPeak:\t  9000 kB\nVmRSS:\t   61440 kB\nRssAnon:\t 1 kB\n", 61440 << 10, true},
		{"no line", "Name:\tx\n", 0, false},
		{"bad unit", "VmRSS:\t 12 MB\n", 0, false},
		{"negative", "VmRSS:\t -12 kB\n", 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseRSS([]byte(tc.in))
			if (err == nil) != tc.ok || got != tc.want {
				t.Fatalf("ParseRSS = %d, %v; want %d ok=%v", got, err, tc.want, tc.ok)
			}
		})
	}
}

func TestParseStatusKBReadsTheNamedLineOnly(t *testing.T) {
	status := []byte("Name:\tx\nVmRSS:\t   61440 kB\nRssAnon:\t   20480 kB\nRssFile:\t   40960 kB\n")
	for name, want := range map[string]int64{"VmRSS": 61440 << 10, "RssAnon": 20480 << 10, "RssFile": 40960 << 10} {
		if got, err := ParseStatusKB(status, name); err != nil || got != want {
			t.Errorf("%s = %d, %v; want %d", name, got, err, want)
		}
	}
	if got, err := ParseStatusKB(status, "Rss"); err == nil {
		t.Errorf("a prefix of a field name matched: %d", got)
	}
}

func TestProcessRSSReadsTheRunningProcess(t *testing.T) {
	rss, anon, err := ProcessRSS(os.Getpid())
	if err != nil || rss < 1<<20 || anon <= 0 || anon > rss {
		t.Fatalf("rss %d, anon %d, %v", rss, anon, err)
	}
}
