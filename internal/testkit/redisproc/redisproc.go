// Package redisproc starts a redis-server of a test's own, without
// persistence, so that a test can flush it, kill it and bring it back empty
// without touching a Redis that other tests share.
package redisproc

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Server is one redis-server process on a free loopback port.
type Server struct {
	t    *testing.T
	bin  string
	port int
	cmd  *exec.Cmd
}

// Start runs a server for t and stops it when t ends. Without the
// redis-server binary the test is skipped, except in CI, where the fault
// tests must run.
func Start(t *testing.T) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server is not installed; CI must run the Redis fault tests")
		}
		t.Skip("redis-server is not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	s := &Server{t: t, bin: bin, port: port}
	s.Restart()
	t.Cleanup(s.Kill)
	return s
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// URL is the server's address as the gateway's redis setting takes it.
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

// Restart starts the server (again, after Kill): it comes back empty.
func (s *Server) Restart() {
	s.t.Helper()
	s.cmd = exec.Command(s.bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", s.t.TempDir())
	out := &strings.Builder{}
	s.cmd.Stdout, s.cmd.Stderr = out, out
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); !s.answers(); {
		if time.Now().After(deadline) {
			s.t.Fatalf("own redis-server did not start: %s", out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// answers reports whether the server answers PING (inline command form, so
// the test kit needs no Redis client of its own).
func (s *Server) answers() bool {
	conn, err := net.DialTimeout("tcp", s.Addr(), time.Second)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// Kill stops the server at once, as a crash would.
func (s *Server) Kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}
