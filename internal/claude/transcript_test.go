package claude

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const claudeTranscript = `{"type":"user","message":{"role":"user","content":"Add a retry budget to the sync worker"}}
{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"I will plan two tasks."},{"type":"tool_use","name":"TaskCreate","input":{}}]}}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"ok"}]}}
{"type":"user","isMeta":true,"message":{"role":"user","content":"<command-name>/compact</command-name>"}}
{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"This session is being continued from a previous conversation. Summary: the retry budget test fails; token sk-ant-api03-abcdefghijklmnopqrstuvwxyz"}}
{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Next I will implement the budget in worker.go."}]}}
`

func writeTranscript(t *testing.T, home, body string) string {
	t.Helper()
	p := filepath.Join(home, ".claude", "projects", "-w-app", "s1.jsonl")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadTranscriptTail(t *testing.T) {
	home := t.TempDir()
	p := writeTranscript(t, home, claudeTranscript)
	dirs := clientDirs(Claude, envOf(map[string]string{"HOME": home}))
	tr, err := ReadTranscriptTail(p, dirs)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tr.Summary, "This session is being continued") || strings.Contains(tr.Summary, "sk-ant") {
		t.Errorf("summary %q", tr.Summary)
	}
	var got []string
	for _, x := range tr.Exchanges {
		got = append(got, x.Role+": "+x.Text)
	}
	want := []string{"user: Add a retry budget to the sync worker", "assistant: I will plan two tasks.", "assistant: Next I will implement the budget in worker.go."}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("exchanges\n got %q\nwant %q", got, want)
	}

	// Never outside the client's directory: another file, a symbolic link
	// out of it, a relative path.
	outside := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(outside, []byte(claudeTranscript), 0o644)
	link := filepath.Join(home, ".claude", "projects", "-w-app", "link.jsonl")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{outside, link, "s1.jsonl", filepath.Join(home, ".claude", "..", "x"), ""} {
		if _, err := ReadTranscriptTail(bad, dirs); !errors.Is(err, ErrOutsideClientDir) && !os.IsNotExist(err) {
			t.Errorf("%q: err %v, want it refused", bad, err)
		}
	}
	if _, err := ReadTranscriptTail(link, dirs); !errors.Is(err, ErrOutsideClientDir) {
		t.Errorf("a link out of the client's directory: %v", err)
	}
}

func TestReadTranscriptTailIsBounded(t *testing.T) {
	home := t.TempDir()
	// 8 MiB of old conversation, one line of 2 MiB, then the compaction.
	var b strings.Builder
	line := `{"type":"assistant","message":{"role":"assistant","content":"old"}}` + "\n"
	for b.Len() < 8<<20 {
		b.WriteString(line)
	}
	b.WriteString(`{"type":"user","message":{"role":"user","content":"` + strings.Repeat("x", 2<<20) + `"}}` + "\n")
	b.WriteString(claudeTranscript)
	p := writeTranscript(t, home, b.String())
	tr, err := ReadTranscriptTail(p, clientDirs(Claude, envOf(map[string]string{"HOME": home})))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Summary == "" || len(tr.Exchanges) != 3 {
		t.Errorf("from the tail of a big file: %+v", tr)
	}
	// Only lines of old text: at most TranscriptMaxLines are looked at,
	// and nothing is found.
	p = writeTranscript(t, home, claudeTranscript[:strings.Index(claudeTranscript, "\n")+1]+strings.Repeat("{}\n", 3*TranscriptMaxLines))
	if tr, _ := ReadTranscriptTail(p, clientDirs(Claude, envOf(map[string]string{"HOME": home}))); len(tr.Exchanges) != 0 {
		t.Errorf("read past %d lines: %+v", TranscriptMaxLines, tr)
	}
}

func TestCodexRollout(t *testing.T) {
	body := `{"type":"session_meta","payload":{"id":"x"}}
{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Fix the flaky test"}]}}
{"type":"compacted","payload":{"message":"Summary: the flaky test is TestSync"}}
{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done; next the docs."}]}}
`
	tr := scanTranscript([]byte(body), time.Now().Add(time.Second))
	if tr.Summary != "Summary: the flaky test is TestSync" || len(tr.Exchanges) != 2 || tr.Exchanges[1].Text != "Done; next the docs." {
		t.Errorf("%+v", tr)
	}
}

func FuzzScanTranscript(f *testing.F) {
	f.Add([]byte(claudeTranscript))
	f.Add([]byte(`{"type":"compacted","payload":{"message":"s"}}` + "\n" + `{"type":"user","message":{"content":[{"type":"text","text":"<x"}]}}`))
	f.Add([]byte("\n\n{\n}{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr := scanTranscript(data, time.Now().Add(time.Second))
		if len(tr.Exchanges) > transcriptExchanges || len(tr.Summary) > 4*transcriptSummaryMax {
			t.Fatalf("unbounded: %d exchanges, summary %d bytes", len(tr.Exchanges), len(tr.Summary))
		}
		for _, x := range tr.Exchanges {
			if len(x.Text) > 4*transcriptTextMax || x.Text == "" {
				t.Fatalf("exchange %q", x.Text)
			}
		}
	})
}
