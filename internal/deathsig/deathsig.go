// Package deathsig starts child processes that are sent a signal when
// the process that started them ends, however it ends: a test binary
// killed at its -timeout or by a cancelled CI job, or `hermes lab`
// killed with SIGKILL, takes its servers (Prometheus, nginx, hermes…)
// with it instead of leaving them running on their ports.
//
// On Linux this is the child's parent-death signal (prctl
// PR_SET_PDEATHSIG, exec's SysProcAttr.Pdeathsig). The kernel sends it
// when the thread that forked the child exits, not the process, and the
// Go runtime ends a thread when a goroutine locked to it returns. So
// every child is forked from one goroutine that locks its thread and
// never returns: that thread lives exactly as long as the process.
// Elsewhere Start is cmd.Start, and a child outlives a killed parent.
package deathsig

import (
	"os/exec"
	"syscall"
)

// Start starts cmd, which is sent sig when this process ends; it keeps
// cmd.SysProcAttr's other settings.
func Start(cmd *exec.Cmd, sig syscall.Signal) error {
	return start(cmd, sig)
}
