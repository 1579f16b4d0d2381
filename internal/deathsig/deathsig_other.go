//go:build !linux

package deathsig

import (
	"os/exec"
	"syscall"
)

func start(cmd *exec.Cmd, _ syscall.Signal) error { return cmd.Start() }
