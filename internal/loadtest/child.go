package loadtest

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"
)

// The hidden subcommands with which the load tool re-executes itself, so
// that each server is its own process with its own CPU account.
const (
	roleUpstream = "_upstream"
	roleProxy    = "_proxy"
	roleGateway  = "_gateway"
)

// ProfileEnv names the environment variable that makes a gateway child
// write a CPU profile of its whole life to the file it names.
const ProfileEnv = "TURNPIKE_LOAD_CPUPROFILE"

// readyPrefix starts the one line a child prints once it accepts requests.
const readyPrefix = "READY "

// IsChildRole reports whether arg is one of the hidden child subcommands.
func IsChildRole(arg string) bool {
	switch arg {
	case roleUpstream, roleProxy, roleGateway:
		return true
	}
	return false
}

// RunChild runs a child server until its standard input closes, which is
// how the parent stops it; a parent that dies therefore never leaves it
// behind. It returns the process exit code.
func RunChild(role string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if os.Getenv(PprofEnv) == "" {
		runtime.MemProfileRate = 0 // as cmd/turnpike does; heap profiles need it
	}
	fs := flag.NewFlagSet(role, flag.ContinueOnError)
	fs.SetOutput(stderr)
	upstream := fs.String("upstream", "", "upstream base URL")
	dir := fs.String("dir", "", "directory for the gateway database")
	chunks := fs.Int("chunks", 20, "content chunks per streamed answer")
	delay := fs.Duration("delay", 0, "pause before each chunk of a paced stream")
	slowDelay := fs.Duration("slow-delay", 0, "pause before each chunk of a slow stream")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		cancel()
	}()
	pprofURL, err := servePprof(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "turnpike-load %s: %v\n", role, err)
		return 1
	}
	ready := func(addr string) {
		fmt.Fprintf(stdout, "%shttp://%s", readyPrefix, addr)
		if pprofURL != "" {
			fmt.Fprintf(stdout, " %s", pprofURL)
		}
		fmt.Fprintln(stdout)
	}
	switch role {
	case roleUpstream:
		up := NewUpstream(*chunks, *delay)
		up.SlowDelay = *slowDelay
		err = serveHandler(ctx, up.Handler(), ready, upstreamH2C())
	case roleProxy:
		var u *url.URL
		if u, err = url.Parse(*upstream); err == nil {
			err = serveHandler(ctx, NewBaselineProxy(u), ready, false)
		}
	case roleGateway:
		err = serveGateway(ctx, *upstream, *dir, stderr, ready)
	default:
		err = fmt.Errorf("unknown child role %q", role)
	}
	if err != nil {
		fmt.Fprintf(stderr, "turnpike-load %s: %v\n", role, err)
		return 1
	}
	return 0
}

func serveHandler(ctx context.Context, h http.Handler, ready func(string), h2cOnly bool) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if h2cOnly {
		h2cOnlyServer(srv)
	}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	ready(ln.Addr().String())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func serveGateway(ctx context.Context, upstream, dir string, logOut io.Writer, ready func(string)) error {
	if upstream == "" || dir == "" {
		return errors.New("-upstream and -dir are required")
	}
	if path := os.Getenv(ProfileEnv); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	a, err := NewGateway(ctx, GatewayConfig(dir, upstream), logOut)
	if err != nil {
		return err
	}
	return a.Serve(ctx, ready)
}

// child is a running child server.
type child struct {
	role  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{}
	err   error
	// URL is the base URL the child serves on.
	URL string
	// pprofURL is where it serves profiles ("" for none; see PprofEnv).
	pprofURL string
}

// startChild re-executes self in role and waits until it is ready.
func startChild(self, role string, args, env []string, stderr io.Writer) (*child, error) {
	cmd := exec.Command(self, append([]string{role}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	first := &firstLine{lines: make(chan string, 1)}
	cmd.Stdout = first
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", role, err)
	}
	c := &child{role: role, cmd: cmd, stdin: stdin, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	select {
	case line := <-first.lines:
		if strings.HasPrefix(line, readyPrefix) {
			c.URL, c.pprofURL, _ = strings.Cut(strings.TrimPrefix(line, readyPrefix), " ")
			return c, nil
		}
		c.stop()
		return nil, fmt.Errorf("%s did not start (said %q)", role, line)
	case <-c.done:
		return nil, fmt.Errorf("%s exited before it was ready: %v", role, c.err)
	case <-time.After(60 * time.Second):
		c.stop()
		return nil, fmt.Errorf("%s did not become ready within 60s", role)
	}
}

// pid is the child's process id, whose CPU time the run measures.
func (c *child) pid() int { return c.cmd.Process.Pid }

// stop asks the child to finish (closing its input) and kills it if it has
// not exited after a grace period long enough for a graceful shutdown.
func (c *child) stop() {
	_ = c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(40 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// firstLine hands the first line written to it to lines and discards the
// rest, so a child's later output cannot block it.
type firstLine struct {
	buf   []byte
	lines chan string
	sent  bool
}

func (f *firstLine) Write(p []byte) (int, error) {
	if f.sent {
		return len(p), nil
	}
	f.buf = append(f.buf, p...)
	if i := bytes.IndexByte(f.buf, '\n'); i >= 0 {
		f.lines <- string(f.buf[:i])
		f.sent, f.buf = true, nil
	}
	return len(p), nil
}
