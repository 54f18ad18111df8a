//go:build !linux

package cluster

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
)

var errNoProc = fmt.Errorf("dev environment: finding processes on %s: %w", runtime.GOOS, errors.ErrUnsupported)

func detached() *syscall.SysProcAttr { return nil }

func kill(int, syscall.Signal) error { return errNoProc }

func processes() ([]Process, error) { return nil, errNoProc }

func processInfo(int) (Process, bool) { return Process{}, false }
