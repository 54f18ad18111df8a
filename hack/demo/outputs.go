package main

import (
	"bytes"
	"regexp"
	"sort"

	"github.com/topolayer/topolayer/contract"
)

// conditionTime matches the timestamps an operator takes from its run's clock.
var conditionTime = regexp.MustCompile(`(last(Transition|Update|Heartbeat)Time|eventTime|firstTimestamp|lastTimestamp): "?[0-9TZ:.-]+"?`)

// sameOutputs compares two output directories of one operator, mutation by mutation (class,
// action, identity), events left out (their names and times differ on every run): how many
// are identical, how many differ only in the run's clock, and which differ otherwise or
// are on one side only.
func sameOutputs(a, b string) (same, timed int, differ []string, err error) {
	read := func(dir string) (map[string][]byte, error) {
		out, err := contract.ReadOutputDir(dir, contract.ReadOptions{})
		if err != nil {
			return nil, err
		}
		m := map[string][]byte{}
		for _, mu := range out.Mutations {
			if mu.Identity().IsEvent() {
				continue
			}
			m[string(mu.Class)+" "+string(mu.Metadata.Action)+" "+mu.Identity().String()] = mu.Body
		}
		return m, nil
	}
	ma, err := read(a)
	if err != nil {
		return 0, 0, nil, err
	}
	mb, err := read(b)
	if err != nil {
		return 0, 0, nil, err
	}
	for k, body := range ma {
		other, ok := mb[k]
		switch {
		case !ok:
			differ = append(differ, k+" (one topology only)")
		case bytes.Equal(body, other):
			same++
		case bytes.Equal(conditionTime.ReplaceAll(body, nil), conditionTime.ReplaceAll(other, nil)):
			timed++
		default:
			differ = append(differ, k)
		}
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			differ = append(differ, k+" (one topology only)")
		}
	}
	sort.Strings(differ)
	return same, timed, differ, nil
}
