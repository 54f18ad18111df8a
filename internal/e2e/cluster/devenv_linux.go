package cluster

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// detached returns the attributes of a process that outlives its parent's session: a new
// session, so that no terminal's signals reach it.
func detached() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}

// kill sends sig to pid.
func kill(pid int, sig syscall.Signal) error {
	return syscall.Kill(pid, sig)
}

// processes lists the live processes, from /proc.
func processes() ([]Process, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var procs []Process
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !e.IsDir() {
			continue
		}
		if p, ok := processInfo(pid); ok {
			procs = append(procs, p)
		}
	}
	return procs, nil
}

// processInfo returns pid's command line, if pid is a live process (not a zombie) whose
// command line this user may read.
func processInfo(pid int) (Process, bool) {
	dir := "/proc/" + strconv.Itoa(pid)
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return Process{}, false
	}
	// pid (comm) state ...: comm may hold spaces and parentheses, the state follows the last ")".
	if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X' {
		return Process{}, false
	}
	cmdline, err := os.ReadFile(dir + "/cmdline")
	if err != nil || len(cmdline) == 0 {
		return Process{}, false
	}
	return Process{PID: pid, Args: strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")}, true
}
