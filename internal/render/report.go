package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
)

// ReportProblem and ReportView are `ckpt check --json` and `ckpt repair
// --json`: a ckpt.Report with the count of errors left, every field
// always present.
type ReportProblem struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	What     string `json:"what"`
	Repair   string `json:"repair,omitempty"`
	Fixed    bool   `json:"fixed"`
}

// ReportView: see ReportProblem.
type ReportView struct {
	Checked  int             `json:"checked"`
	Errors   int             `json:"errors"`
	Problems []ReportProblem `json:"problems"`
}

// NewReportView is rep as the --json forms print it; Problems is [] when
// there are none.
func NewReportView(rep *ckpt.Report) ReportView {
	out := ReportView{Checked: rep.Checked, Errors: rep.Errors(), Problems: []ReportProblem{}}
	for _, p := range rep.Problems {
		out.Problems = append(out.Problems, ReportProblem{ID: p.ID, Severity: string(p.Severity), What: p.What, Repair: p.Repair, Fixed: p.Fixed})
	}
	return out
}

// ReportJSON writes NewReportView(rep), indented. The only error is w's.
func ReportJSON(w io.Writer, rep *ckpt.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(NewReportView(rep))
}

// ReportText writes a check report (repair false) or a repair report as
// `ckpt check` and `ckpt repair` print it: one line per problem, "ID
// SEVERITY what (repair: how)", or "fixed: what" for one repair fixed ("-"
// for the store as a whole), then a count of what was checked or
// repaired, the problems and the errors left (and for a repair, how many
// were fixed). Stored names go through Terminal. The only error is w's.
func ReportText(w io.Writer, rep *ckpt.Report, repair bool) error {
	out := NewTerminalWriter(w)
	fixed := 0
	for _, p := range rep.Problems {
		line := fmt.Sprintf("%s  %s  ", Dash(p.ID), p.Severity)
		switch {
		case p.Fixed:
			fixed++
			line += "fixed: " + p.What
		case p.Repair != "":
			line += p.What + "  (repair: " + p.Repair + ")"
		default:
			line += p.What
		}
		fmt.Fprintln(out, line)
	}
	verb := "checked"
	if repair {
		verb = "repaired"
	}
	fmt.Fprintf(out, "%s %d checkpoint(s): %d problem(s), %d error(s) left", verb, rep.Checked, len(rep.Problems), rep.Errors())
	if repair {
		fmt.Fprintf(out, ", %d fixed", fixed)
	}
	fmt.Fprintln(out)
	return out.Flush()
}

// PartialProblem is the warning `ckpt check` gives for c when it is marked
// done with acceptance criteria unmet (sitebuilder (seed 003), scenario 3): the store is
// sound, the work is not finished. ok is false for any other checkpoint.
func PartialProblem(c *ckpt.Checkpoint) (p ckpt.Problem, ok bool) {
	if !c.PartiallyComplete() {
		return ckpt.Problem{}, false
	}
	var unmet []string
	for _, a := range c.Acceptance {
		if !a.Met {
			unmet = append(unmet, a.ID)
		}
	}
	return ckpt.Problem{
		ID: c.ID, Severity: ckpt.SeverityWarning,
		What:   fmt.Sprintf("partially complete: marked done but %d acceptance criteria unmet (%s)", len(unmet), strings.Join(unmet, ", ")),
		Repair: fmt.Sprintf("finish them and record each with ckpt accept %s CRIT, or reopen with ckpt update %s --status in_progress", c.ID, c.ID),
	}, true
}
