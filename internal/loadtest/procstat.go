package loadtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// clockTick is the unit of utime and stime in /proc/<pid>/stat: USER_HZ,
// which Linux fixes at 100 for user space regardless of the kernel's HZ.
const clockTick = 10 * time.Millisecond

// ProcessCPU returns the user plus system CPU time pid has used so far.
func ProcessCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return ParseProcStat(raw)
}

// ParseProcStat reads utime+stime from the contents of a /proc/<pid>/stat
// file. The command name in parentheses may itself hold spaces and
// parentheses, so the fields are counted from the last ')'.
func ParseProcStat(raw []byte) (time.Duration, error) {
	end := bytes.LastIndexByte(raw, ')')
	if end < 0 {
		return 0, errors.New("procstat: no command name")
	}
	// After the name come state (field 3) … utime (14) and stime (15).
	fields := bytes.Fields(raw[end+1:])
	const utime, stime = 14 - 3, 15 - 3
	if len(fields) <= stime {
		return 0, fmt.Errorf("procstat: %d fields after the name, want more than %d", len(fields), stime)
	}
	u, err := strconv.ParseUint(string(fields[utime]), 10, 63)
	if err != nil {
		return 0, fmt.Errorf("procstat: utime: %w", err)
	}
	s, err := strconv.ParseUint(string(fields[stime]), 10, 63)
	if err != nil {
		return 0, fmt.Errorf("procstat: stime: %w", err)
	}
	const maxTicks = uint64(1<<62) / uint64(clockTick)
	if u > maxTicks || s > maxTicks {
		return 0, errors.New("procstat: CPU time out of range")
	}
	return time.Duration(u+s) * clockTick, nil
}

// ProcessRSS returns pid's resident memory in bytes (VmRSS of
// /proc/<pid>/status) and the anonymous part of it (RssAnon): the rest is
// file pages, mostly the binary's code and embedded data, which the
// kernel can drop and reread.
func ProcessRSS(pid int) (rss, anon int64, err error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	if rss, err = ParseStatusKB(raw, "VmRSS"); err == nil {
		anon, err = ParseStatusKB(raw, "RssAnon")
	}
	return rss, anon, err
}

// ParseRSS reads the VmRSS line ("VmRSS:   12345 kB") of a status file.
func ParseRSS(raw []byte) (int64, error) { return ParseStatusKB(raw, "VmRSS") }

// ParseStatusKB reads one "Name:   12345 kB" line of a status file, in bytes.
func ParseStatusKB(raw []byte, name string) (int64, error) {
	prefix := []byte(name + ":")
	for _, line := range bytes.Split(raw, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, prefix)
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("procstat: unexpected %s line %q", name, line)
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil || kb < 0 || kb > 1<<40 {
			return 0, fmt.Errorf("procstat: %s %q", name, f[0])
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("procstat: no %s line", name)
}
