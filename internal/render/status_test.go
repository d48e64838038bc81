package render

import (
	"errors"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

func TestAge(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Minute, "just now"},
		{0, "just now"},
		{59 * time.Second, "just now"},
		{time.Minute, "1 min ago"},
		{2*time.Minute + 59*time.Second, "2 min ago"},
		{59 * time.Minute, "59 min ago"},
		{time.Hour, "1 h ago"},
		{3*time.Hour + 40*time.Minute, "3 h ago"},
		{23 * time.Hour, "23 h ago"},
		{24 * time.Hour, "1 d ago"},
		{4*24*time.Hour + 23*time.Hour, "4 d ago"},
		{400 * 24 * time.Hour, "400 d ago"},
	} {
		if got := Age(tc.d); got != tc.want {
			t.Errorf("Age(%v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// seed003Now is two minutes after T060's last update, five after T040's.
var seed003Now = ts("2025-12-08T14:54:10Z")

// TestStatusMarkdownSeed003 reproduces the table of seed 003's
// "Integration with Status" section from the three checkpoints it shows.
// One deliberate difference: T060 is 19 of 29 (65.5%), which the document
// truncates to 65%; ckpt rounds every percentage half up (ckpt.Percent), so
// that STATUS.md, ckpt status, ls and the prompt all say 66%.
func TestStatusMarkdownSeed003(t *testing.T) {
	md := StatusMarkdown([]*ckpt.Checkpoint{t060(t), t040(t), t001(t)}, seed003Now, ckpt.Thresholds{}, nil)
	const seedTable = `## Active Checkpoints

| Agent | Task | Progress | Last Update | Status |
|-------|------|----------|-------------|--------|
| migration | T060 | 66% | 2 min ago | in_progress |
| technical | T040 | 100% | 5 min ago | complete |
| content | T001 | 0% | — | not started |
`
	if !strings.Contains(md, seedTable) {
		t.Errorf("STATUS.md lacks seed 003's table:\n%s", md)
	}
	golden(t, "status_seed003.md", md)
}

func TestStatusMarkdownRows(t *testing.T) {
	row := func(md string) string {
		lines := strings.Split(strings.TrimSpace(strings.SplitN(md, "|--------|\n", 2)[1]), "\n")
		return lines[0]
	}
	for _, tc := range []struct {
		name string
		c    func(testing.TB) *ckpt.Checkpoint
		now  time.Time
		th   ckpt.Thresholds
		want string
	}{
		// T060 beats every 5 minutes: warn after 10, stalled after 20 (seed 003).
		{"warning", t060, ts("2025-12-08T15:04:11Z"), ckpt.Thresholds{}, "| migration | T060 | 66% | 12 min ago | in_progress (warning) |"},
		{"stalled", t060, ts("2025-12-08T15:52:10Z"), ckpt.Thresholds{}, "| migration | T060 | 66% | 1 h ago | in_progress (stalled) |"},
		{"thresholds given", t060, ts("2025-12-08T15:04:11Z"), ckpt.Thresholds{Warn: time.Hour, Stale: 2 * time.Hour}, "| migration | T060 | 66% | 12 min ago | in_progress |"},
		{"partial", t062, ts("2025-12-08T15:30:00Z"), ckpt.Thresholds{}, "| migration | T062 | 100% | just now | complete (partial) |"},
		{"blocked", blockedT060, ts("2025-12-08T14:54:00Z"), ckpt.Thresholds{}, "| migration | T060 | 66% | just now | blocked |"},
		{"no task id, pipes escaped", func(tb testing.TB) *ckpt.Checkpoint {
			c := t040(tb)
			c.TaskID, c.Title, c.Agent.ID = "", "a|b\nc", "tech|nical"
			return c
		}, ts("2025-12-08T14:49:10Z"), ckpt.Thresholds{}, `| tech\|nical | a\|b c | 100% | just now | complete |`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := StatusMarkdown([]*ckpt.Checkpoint{tc.c(t)}, tc.now, tc.th, nil)
			if got := row(md); got != tc.want {
				t.Errorf("row = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStatusMarkdownPartialCompletion(t *testing.T) {
	md := StatusMarkdown([]*ckpt.Checkpoint{t060(t), t062(t)}, ts("2025-12-08T15:30:00Z"), ckpt.Thresholds{}, nil)
	for _, want := range []string{
		"**Overall Progress**: 83% (1/2 tasks complete)\n",
		"| migration | T062 | 100% | just now | complete (partial) |\n",
		"## Partially Complete\n\n- migration T062: unmet 85_images_catalogued\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("STATUS.md lacks %q:\n%s", want, md)
		}
	}
}

func TestStatusMarkdownEmpty(t *testing.T) {
	got := StatusMarkdown(nil, seed003Now, ckpt.Thresholds{}, nil)
	want := `# Orchestration Status

**Last Updated**: 2025-12-08T14:54:10Z
**Overall Progress**: 0% (0/0 tasks complete)

---

## Active Checkpoints

| Agent | Task | Progress | Last Update | Status |
|-------|------|----------|-------------|--------|
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestStatusTable(t *testing.T) {
	long := t060(t)
	long.ID = "fleet/" + strings.Repeat("very-long-id-", 6)
	long.Title = "Tab\there, newline\nthere, and a title far too long for its column"
	now := seed003Now.Add(25 * time.Minute)
	long.Heartbeat.LastBeat = now.Add(-12 * time.Minute) // silent past 2× its 5-minute interval
	cs := []*ckpt.Checkpoint{t060(t), t040(t), t001(t), t062(t), blockedT060(t), secondaryA(t), long}
	var b strings.Builder
	if err := StatusTable(&b, cs, now, ckpt.Thresholds{}, nil); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	golden(t, "status_table.txt", out)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(cs)+1 {
		t.Fatalf("%d lines, want a header and %d rows:\n%s", len(lines), len(cs), out)
	}
	// An ID is never shortened (a person copies it into the next command,
	// archives' long IDs included), and an empty cell is "-" as in ckpt ls.
	for _, want := range []string{"done (partial)", "[######----]  66%", "[##########] 100%", "stale", "warn", long.ID + "  ", "T001                                      pending         [----------]   0%  -"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestStatusTableEmpty(t *testing.T) {
	var b strings.Builder
	if err := StatusTable(&b, nil, seed003Now, ckpt.Thresholds{}, nil); err != nil {
		t.Fatal(err)
	}
	if b.String() != "No checkpoints.\n" {
		t.Errorf("got %q", b.String())
	}
}

type failingWriter struct{}

var errWrite = errors.New("disk full")

func (failingWriter) Write([]byte) (int, error) { return 0, errWrite }

func TestStatusTableWriteError(t *testing.T) {
	for _, cs := range [][]*ckpt.Checkpoint{nil, {t060(t)}} {
		if err := StatusTable(failingWriter{}, cs, seed003Now, ckpt.Thresholds{}, nil); !errors.Is(err, errWrite) {
			t.Errorf("StatusTable on a failing writer = %v, want %v", err, errWrite)
		}
	}
}
