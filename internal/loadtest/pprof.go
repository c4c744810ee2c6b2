package loadtest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
)

// PprofEnv makes a proxy or gateway child serve its runtime profiles on a
// second loopback port, named in its ready line, so the parent can take heap and
// goroutine profiles while a phase holds its streams open. It is a separate
// listener so profiling never shares the server under test.
const PprofEnv = "TURNPIKE_LOAD_PPROF"

// servePprof starts the profile server when the child was asked for one and
// returns its base URL ("" when not asked).
func servePprof(ctx context.Context) (string, error) {
	if os.Getenv(PprofEnv) == "" {
		return "", nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: http.HandlerFunc(serveProfile), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	return "http://" + ln.Addr().String(), nil
}

// serveProfile writes the runtime profile named by the path's last element
// (/debug/pprof/heap), with pprof's debug and gc parameters. It stands in for
// net/http/pprof, whose init would register its handlers on
// http.DefaultServeMux in every process of the binary, asked or not.
func serveProfile(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/debug/pprof/")
	if name == smapsProfile {
		serveSmaps(w)
		return
	}
	p := pprof.Lookup(name)
	if p == nil {
		http.NotFound(w, r)
		return
	}
	if r.FormValue("gc") != "" {
		runtime.GC()
	}
	debug, _ := strconv.Atoi(r.FormValue("debug"))
	if debug == 0 {
		w.Header().Set("Content-Type", "application/octet-stream")
	}
	_ = p.WriteTo(w, debug)
}

// smapsProfile names the process's memory map with each mapping's resident
// pages (/proc/self/smaps), served beside the runtime's profiles: RSS split
// by what holds it (the executable's code, its read-only data and function
// tables, the Go heap, the tokenizer's table, SQLite's allocator), which
// MemStats cannot show since most of it is not Go's heap.
const smapsProfile = "smaps"

// serveSmaps copies /proc/self/smaps; where there is none (not Linux) it
// says so in the text rather than failing the phase's other profiles.
func serveSmaps(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		fmt.Fprintf(w, "no smaps: %v\n", err)
		return
	}
	defer f.Close()
	_, _ = io.Copy(w, f)
}

// profiles are the ones taken during a phase: the live heap after a
// collection (what each open stream holds), the same as text for its
// runtime.MemStats (stacks, heap goal, memory held but free), every
// goroutine's stack, and the memory map with resident pages per mapping.
var profiles = []struct{ name, query, file string }{
	{"heap", "gc=1", "heap.pprof"},
	{"heap", "debug=1", "memstats.txt"},
	{"goroutine", "", "goroutine.pprof"},
	{"allocs", "", "allocs.pprof"},
	{smapsProfile, "", "smaps.txt"},
}

// takeProfiles saves t's profiles into dir, named after the phase; a target
// that serves no profiles is skipped.
func takeProfiles(ctx context.Context, t *child, dir, stem string) error {
	if t.pprofURL == "" {
		return nil
	}
	for _, p := range profiles {
		url := t.pprofURL + "/debug/pprof/" + p.name
		if p.query != "" {
			url += "?" + p.query
		}
		if err := saveURL(ctx, url, filepath.Join(dir, stem+"."+p.file)); err != nil {
			return fmt.Errorf("profile %s of %s: %w", p.name, t.role, err)
		}
	}
	return nil
}

func saveURL(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
