package deathsig

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// request is one child for the forking goroutine to start.
type request struct {
	cmd  *exec.Cmd
	done chan error
}

var (
	forkOnce sync.Once
	forks    chan request
)

func start(cmd *exec.Cmd, sig syscall.Signal) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = sig
	forkOnce.Do(func() {
		forks = make(chan request)
		go fork(forks)
	})
	r := request{cmd: cmd, done: make(chan error, 1)}
	forks <- r
	return <-r.done
}

// fork starts each child it is sent from its own thread, which it locks
// and never gives back: the thread ends with the process, and only then
// do the children get their signal.
func fork(reqs <-chan request) {
	runtime.LockOSThread()
	for r := range reqs {
		r.done <- r.cmd.Start()
	}
}
