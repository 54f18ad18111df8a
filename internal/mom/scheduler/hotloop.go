package scheduler

import "slices"

// digestHistory is how many recent digests are kept to recognise oscillations (cycles of up
// to digestHistory runs).
const digestHistory = 8

// hotLoop follows one operator's successful runs to tell an operator that converges from one
// that keeps re-triggering itself or oscillates.
type hotLoop struct {
	digests    []string // digests of the last successful runs, oldest first
	selfStreak int      // self-triggered runs in a row with a new digest
	revisits   int      // runs in a row that returned to an earlier (not the previous) digest
	active     bool
	reason     Reason
	episodes   int
}

// observe records a successful run: whether every cause was self-inflicted, and its digest.
// maxSelf and oscillations are the thresholds of HotLoopOptions after defaulting (negative
// disables a check). It reports whether a hot loop was detected by this run (a new episode).
func (h *hotLoop) observe(selfOnly bool, digest string, maxSelf, oscillations int) (detected bool) {
	n := len(h.digests)
	if n > 0 && h.digests[n-1] == digest {
		h.selfStreak, h.revisits = 0, 0 // converged
	} else {
		if selfOnly {
			h.selfStreak++
		} else {
			h.selfStreak = 0
		}
		// Only the operator's own writes make an oscillation: a user switching a setting back
		// and forth brings the outputs back to an earlier digest too, and is not a loop.
		if selfOnly && n > 1 && slices.Contains(h.digests[:n-1], digest) {
			h.revisits++
		} else {
			h.revisits = 0
		}
	}
	h.digests = append(h.digests, digest)
	if len(h.digests) > digestHistory {
		h.digests = slices.Delete(h.digests, 0, len(h.digests)-digestHistory)
	}

	was := h.active
	switch {
	case oscillations > 0 && h.revisits >= oscillations: // the more specific reason first
		h.active, h.reason = true, ReasonOscillating
	case maxSelf >= 0 && h.selfStreak > maxSelf:
		h.active, h.reason = true, ReasonSelfTriggered
	default:
		h.active, h.reason = false, ""
	}
	if h.active && !was {
		h.episodes++
		return true
	}
	return false
}

// selfOnly reports whether a run was triggered only by the operator's own writes.
func selfOnly(causes []Cause) bool {
	if len(causes) == 0 {
		return false
	}
	for _, c := range causes {
		if !c.SelfInflicted {
			return false
		}
	}
	return true
}
