package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkPresenceHook compares a presence-only hook call as Claude Code
// makes it (`ckpt hook PreToolUse`, a new process reading the payload,
// finding the store and the client's process, one beat with the state) with
// `ckpt beat ID` as a process. The two alternate within one loop, so that
// both see the same machine: a busy neighbour slows both alike. The hook
// must cost no more than the beat: "x-beat" (median wall time) and
// "x-beat-cpu" (median user+system time) are the figures to watch.
//
//	go test -run '^$' -bench PresenceHook -benchtime 200x ./cmd/ckpt
func BenchmarkPresenceHook(b *testing.B) {
	bin := ckptBinary(b)
	dir := hookProject(b, bin)
	payload := fmt.Sprintf(`{"session_id":"s1","transcript_path":"/tmp/t.jsonl","cwd":%q,"permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test ./...","description":"Run the tests"},"tool_use_id":"toolu_01"}`, dir)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	beat := func() *exec.Cmd {
		return exec.Command(bin, "--store", dir+"/.ckpt", "beat", "job")
	}
	hook := func() *exec.Cmd {
		cmd := exec.Command(bin, "hook", "PreToolUse")
		cmd.Dir = dir
		cmd.Env = append(env, "CKPT_ID=job")
		cmd.Stdin = strings.NewReader(payload)
		return cmd
	}
	var beatWall, beatCPU, hookWall, hookCPU []time.Duration
	run := func(cmd *exec.Cmd, wall, cpu *[]time.Duration) {
		if cmd.Env == nil {
			cmd.Env = env
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		t := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%v: %v\n%s", cmd.Args, err, out.Bytes())
		}
		*wall = append(*wall, time.Since(t))
		*cpu = append(*cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		if cmd.Args[1] == "hook" && out.Len() > 0 {
			b.Fatalf("ckpt hook PreToolUse printed %q; want nothing", out.Bytes())
		}
	}
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			run(beat(), &beatWall, &beatCPU)
			run(hook(), &hookWall, &hookCPU)
		} else {
			run(hook(), &hookWall, &hookCPU)
			run(beat(), &beatWall, &beatCPU)
		}
		i++
	}
	med := func(d []time.Duration) time.Duration {
		slices.Sort(d)
		return d[len(d)/2]
	}
	b.ReportMetric(float64(med(beatWall).Microseconds())/1000, "ms-beat")
	b.ReportMetric(float64(med(hookWall).Microseconds())/1000, "ms-hook")
	b.ReportMetric(float64(med(hookWall))/float64(med(beatWall)), "x-beat")
	b.ReportMetric(float64(med(hookCPU))/float64(med(beatCPU)), "x-beat-cpu")
}
