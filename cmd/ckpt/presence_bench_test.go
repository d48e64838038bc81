package main

import (
	"fmt"
	"testing"
)

// BenchmarkPresenceHook compares a presence-only hook call as Claude Code
// makes it (`ckpt hook PreToolUse`, a new process reading the payload,
// finding the store and the client's process, one beat with the state) with
// `ckpt beat ID` as a process, in the same run. The hook must cost no more
// than the beat: its "x-beat" ratio is the figure to watch (about 1).
//
//	go test -run '^$' -bench PresenceHook -benchtime 200x ./cmd/ckpt
func BenchmarkPresenceHook(b *testing.B) {
	bin := ckptBinary(b)
	dir := hookProject(b, bin)
	store := dir + "/.ckpt"
	b.Run("beat", func(b *testing.B) {
		timeLoop(b, "beat", func() error {
			_, err := ckptRun(b, bin, "--store", store, "beat", "job")
			return err
		})
	})
	payload := fmt.Sprintf(`{"session_id":"s1","transcript_path":"/tmp/t.jsonl","cwd":%q,"permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test ./...","description":"Run the tests"},"tool_use_id":"toolu_01"}`, dir)
	b.Run("pre-tool-use", func(b *testing.B) {
		med := timeLoop(b, "pre-tool-use", func() error {
			code, out, errOut := hookRun(b, bin, dir, "PreToolUse", payload, "CKPT_ID=job")
			if code != 0 || out != "" || errOut != "" {
				return fmt.Errorf("ckpt hook PreToolUse: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			return nil
		})
		if beat := medians["beat"]; beat > 0 {
			b.ReportMetric(float64(med)/float64(beat), "x-beat")
		}
	})
}
