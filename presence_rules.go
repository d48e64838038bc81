package ckpt

// PresenceRule is one rule of PresenceOf: the first that matches decides a
// checkpoint's state. docs/design.md ("Presence") holds the same table;
// TestPresenceRulesDocumented keeps the two equal.
type PresenceRule struct {
	N      int           // its number, PresenceView.Rule
	When   string        // what must hold
	State  PresenceState // the state it gives
	Signal string        // where the deciding fact comes from
	Change string        // what would change the state
}

// PresenceRules are PresenceOf's rules in the order it tries them.
var PresenceRules = []PresenceRule{
	{1, "archived", PresenceNone, "history: archived event",
		"nothing: an archive is final; its live copy has its own state"},
	{2, "status pending or abandoned", PresenceNone, "history: status",
		"the first update or step (pending → in_progress), `ckpt resume`"},
	{3, "status done", PresenceDone, "history: status (`ckpt done`)",
		"`ckpt resume` or `ckpt restart`"},
	{4, "status failed", PresenceFailed, "history: status (`ckpt fail`)",
		"`ckpt resume`, `ckpt takeover` or `ckpt restart`"},
	{5, "last seen is ahead of the reader's clock by more than the skew bound (2m)", PresenceWarn, "clock: last seen vs the reader's now",
		"a beat with a sane clock, or the reader's clock catching up"},
	{6, "status blocked, or an active blocker or blocking error", PresenceBlocked, "history: blocker and blocking error events",
		"`ckpt unblock` (clear the blockers and blocking errors)"},
	{7, "status waiting (`ckpt wait --reason`), no report of work since", PresenceWaiting, "history: status (`ckpt wait`)",
		"the answer: a report of work (a prompt, a tool) or `ckpt update ID --status in_progress`"},
	{8, "reported ended in the current session", PresenceEnded, "report: SessionEnd hook or `ckpt beat --state ended`",
		"a new session or process (`claude --resume`, `ckpt resume`); nothing from the ended session or its process"},
	{9, "the bound process is gone after its turn ended (Stop or StopFailure reported waiting: turn ended/failed)", PresenceEnded, "process probe after a Stop report",
		"a new session or process"},
	{10, "the bound process is gone (no such PID, a zombie, or the PID started at another time)", PresenceDead, "process probe (this host)",
		"`ckpt takeover`, `ckpt restart` or `ckpt resume` in a new process"},
	{11, "reported busy and silent ≤ stale", PresenceBusy, "report: PreToolUse, SubagentStart, PreCompact hooks",
		"the tool's end (PostToolUse), or silence past stale"},
	{12, "reported waiting and (silent ≤ stale or the bound process is alive)", PresenceWaiting, "report: Notification, PermissionRequest, Stop, StopFailure hooks or `ckpt beat --state waiting`",
		"the next sign of work (the answer, a tool, a prompt), or silence past stale with no live process"},
	{13, "silent > stale (4× the interval or --stale)", PresenceStale, "clock: last seen",
		"a beat or an update; `ckpt takeover`"},
	{14, "silent > warn (2× the interval or --warn)", PresenceWarn, "clock: last seen",
		"a beat or an update; more silence makes it stale"},
	{15, "otherwise", PresenceWorking, "report or update: the last sign of work",
		"a report (busy, waiting, ended), a status change, or silence past warn"},
}

// PresenceRuleOf returns the rule numbered n, or false.
func PresenceRuleOf(n int) (PresenceRule, bool) {
	if n < 1 || n > len(PresenceRules) {
		return PresenceRule{}, false
	}
	return PresenceRules[n-1], true
}
