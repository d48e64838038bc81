package sitebuilder

import (
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/protocols/internal/adaptertest"
)

func TestParseStatusMarkdownReadsTheRealTables(t *testing.T) {
	rows, warnings, err := ParseStatusMarkdown(adaptertest.ReadFile(t, "testdata/fixtures/STATUS.1dc665c.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 {
		t.Fatalf("%d rows", len(rows))
	}
	r := rows[0]
	if r.Agent != "Migration" || r.AgentName != "Riley" || r.Task != "Fungi image cataloguing" || r.Status != ckpt.StatusInProgress ||
		r.LastUpdateAt == nil || !r.LastUpdateAt.Equal(time.Date(2025, 12, 9, 14, 0, 0, 0, time.UTC)) || r.Percent != nil {
		t.Errorf("first row %+v", r)
	}
	if rows[3].Status != ckpt.StatusBlocked || rows[3].LastUpdate != "" || rows[5].Status != ckpt.StatusPending {
		t.Errorf("blocked/idle rows %+v %+v", rows[3], rows[5])
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], `"Idle"`) {
		t.Errorf("warnings %q", warnings)
	}
	rows, _, err = ParseStatusMarkdown(adaptertest.ReadFile(t, "testdata/fixtures/STATUS.fc9d5aa.md"))
	if err != nil || rows[0].StatusText != "Completed" || rows[0].Status != ckpt.StatusDone {
		t.Errorf("emoji-marked status: %+v %v", rows[0], err)
	}
}

func TestParseStatusMarkdownEdges(t *testing.T) {
	if _, _, err := ParseStatusMarkdown([]byte("# Status\n\nNothing here.\n")); err == nil || !strings.Contains(err.Error(), "Active Checkpoints") {
		t.Errorf("no table: %v", err)
	}
	fenced := "## Active Checkpoints\n\n```\n| Agent | Status |\n|---|---|\n| ghost | done |\n```\n"
	if rows, _, err := ParseStatusMarkdown([]byte(fenced)); err == nil || len(rows) != 0 {
		t.Errorf("a table inside a code fence was read: %v %v", rows, err)
	}
	md := "## Active Checkpoints\n\n| Status | Progress | Agent | Task |\n|:--|--:|---|---|\n| **blocked** | ~40% | `content (Harper)` | T001 \\| T002 |\n| working hard | n/a | polish | — |\n"
	rows, warnings, err := ParseStatusMarkdown([]byte(md))
	if err != nil || len(rows) != 2 {
		t.Fatalf("%v %v", rows, err)
	}
	if r := rows[0]; r.Agent != "content" || r.AgentName != "Harper" || r.Task != "T001 | T002" || *r.Percent != 40 || r.Status != ckpt.StatusBlocked {
		t.Errorf("columns in another order: %+v", r)
	}
	if r := rows[1]; r.Status != ckpt.StatusInProgress || r.Percent != nil || r.Task != "" || len(warnings) != 1 {
		t.Errorf("unknown word: %+v %q", r, warnings)
	}
}

func FuzzParseStatusMarkdown(f *testing.F) {
	adaptertest.AddInputs(f, ".md")
	f.Fuzz(func(t *testing.T, md []byte) {
		rows, _, err := ParseStatusMarkdown(md)
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.Agent == "" || !r.Status.Valid() {
				t.Fatalf("row %+v", r)
			}
		}
	})
}
