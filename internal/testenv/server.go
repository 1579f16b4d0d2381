package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Server is a program that a test starts, and may stop and start again
// with the same command line: the same address, the same data. Each start
// is a new [Process], logged to Dir/NAME-N.log for the Nth start.
type Server struct {
	Name  string
	Dir   string // its logs, and its working directory
	Bin   string
	Args  []string
	Ready string // a URL that answers 200 once the server serves

	// StopSignal and StopTimeout, when set, replace the [Process]
	// defaults when the server is stopped.
	StopSignal  os.Signal
	StopTimeout time.Duration

	owner  testing.TB
	proc   *Process
	starts int
}

// NewServer prepares a server owned by t; it does not start it. Whichever
// test starts it, each of its processes runs until [Server.Stop] or the
// end of t, and the tail of its log is printed if t failed.
func NewServer(t testing.TB, name, dir, ready, bin string, args ...string) *Server {
	return &Server{Name: name, Dir: dir, Bin: bin, Args: args, Ready: ready, owner: t}
}

// Start starts the server (again) and waits up to 30s until Ready answers
// 200; it fails t if the server exits first.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	s.starts++
	cmd := exec.Command(s.Bin, s.Args...)
	cmd.Dir = s.Dir
	log := filepath.Join(s.Dir, fmt.Sprintf("%s-%d.log", s.Name, s.starts))
	s.proc = startOwned(t, s.owner, s.Name, cmd, log, s.stopWith)
	WaitHTTP(t, s.Ready, 30*time.Second, s.proc)
}

// stopWith applies the server's StopSignal and StopTimeout to p.
func (s *Server) stopWith(p *Process) {
	if s.StopSignal != nil {
		p.StopSignal = s.StopSignal
	}
	if s.StopTimeout > 0 {
		p.StopTimeout = s.StopTimeout
	}
}

// Stop stops the running process ([Process.Stop]), logging a SIGKILL.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if s.proc == nil {
		return
	}
	s.stopWith(s.proc)
	if err := s.proc.Stop(); err != nil {
		t.Log(err)
	}
}

// Process is the process of the latest start.
func (s *Server) Process() *Process { return s.proc }

// LogPath is the log of the latest start.
func (s *Server) LogPath() string { return s.proc.LogPath }
