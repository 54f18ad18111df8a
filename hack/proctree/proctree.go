package proctree

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Descendants returns the roots that still exist and all their descendants, from the parent
// ids in /proc/<pid>/stat; roots first, then breadth first.
func Descendants(roots ...int) []int {
	children := map[int][]int{}
	alive := map[int]bool{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(data[i+1:]))
		if len(fields) < 2 {
			continue
		}
		pid, err1 := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		ppid, err2 := strconv.Atoi(fields[1])
		if err1 == nil && err2 == nil {
			children[ppid] = append(children[ppid], pid)
			alive[pid] = true
		}
	}
	var out []int
	seen := map[int]bool{}
	queue := append([]int(nil), roots...)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] || !alive[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
		queue = append(queue, children[p]...)
	}
	return out
}

// StatusBytes returns a "kB" field of /proc/<pid>/status (VmRSS, VmHWM, RssAnon) in bytes; 0
// when the process is gone.
func StatusBytes(pid int, field string) int64 {
	return kBField(fmt.Sprintf("/proc/%d/status", pid), field)
}

// SmapsBytes returns a "kB" field of /proc/<pid>/smaps_rollup (Pss, Pss_Anon, Pss_File) in
// bytes; 0 when the process is gone. Pss is the process's proportional share of its memory:
// a page shared by n processes (the code of a binary they all run) counts 1/n.
func SmapsBytes(pid int, field string) int64 {
	return kBField(fmt.Sprintf("/proc/%d/smaps_rollup", pid), field)
}

// kBField returns the "<field>: <n> kB" line of a /proc file in bytes.
func kBField(file, field string) int64 {
	f, err := os.Open(file)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}
