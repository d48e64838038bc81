package testsupport

import (
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// JudgeAll is the stale report of one listing, judged in one page (what
// ckpt.StaleFrom makes page by page from a store).
func JudgeAll(list []ckpt.Summary, now time.Time, th ckpt.Thresholds, alive ckpt.AliveFunc) ckpt.StaleReport {
	j := ckpt.NewStaleJudge(now, th, alive)
	j.Add(list)
	return j.Report()
}
