// Package fourstep is ccc's (seed 001) four-step checkpoint (docs/checkpoint.md)
// over any ckpt.Store: persist .ccc-progress.md, take a scoped git snapshot
// (package gitsnap), upsert the issue tracker's status comment (package
// tracker), print the continuation prompt. Each step fails forward, and a
// completion report ends the run. `ckpt checkpoint` and the hooks' final
// checkpoint call Run; neither has steps of its own.
package fourstep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/autockpt"
	"github.com/ckpt-dev/ckpt/internal/gitsnap"
	"github.com/ckpt-dev/ckpt/internal/tracker"
	"github.com/ckpt-dev/ckpt/internal/tracker/github"
	"github.com/ckpt-dev/ckpt/internal/tracker/linear"
	"github.com/ckpt-dev/ckpt/protocols/ccc"
)

// The checkpoint profiles: manual runs all four steps, auto (the stop hook,
// PreCompact, SessionEnd) steps 1 and 3.
const (
	ProfileManual = "manual"
	ProfileAuto   = "auto"
)

// Environment variables the tracker step reads.
const (
	EnvGitHubToken  = "GITHUB_TOKEN"
	EnvGHToken      = "GH_TOKEN"
	EnvGitHubAPIURL = "GITHUB_API_URL"
	EnvLinearKey    = autockpt.EnvLinearKey
	EnvLinearAPIURL = "LINEAR_API_URL"
)

// stateUpdatedKey is the .ccc-state.json field where the checkpoint records
// when it last wrote the status comment, so the next comment lists the
// decisions made since (ccc's (seed 001) "key decisions since last checkpoint").
const stateUpdatedKey = "checkpointUpdatedAt"

// Tracker configures step 3. At most one tracker: GitHub (repo and issue)
// or Linear (issue).
type Tracker struct {
	GitHubRepo  string // owner/name
	GitHubIssue string // issue number
	LinearIssue string // CIA-123 or a UUID; else .ccc-state.json linearIssue
	GitHubToken string
	GitHubURL   string // API root; "" is api.github.com
	LinearKey   string
	LinearURL   string // GraphQL endpoint; "" is api.linear.app
	Timeout     time.Duration
	Client      *http.Client // nil: a new client
}

// TrackerFromEnv reads the credentials and API addresses from the
// environment: GITHUB_TOKEN (else GH_TOKEN), GITHUB_API_URL, LINEAR_API_KEY
// and LINEAR_API_URL.
func TrackerFromEnv(getenv func(string) string) Tracker {
	s := Tracker{
		GitHubToken: getenv(EnvGitHubToken),
		GitHubURL:   getenv(EnvGitHubAPIURL),
		LinearKey:   getenv(EnvLinearKey),
		LinearURL:   getenv(EnvLinearAPIURL),
	}
	if s.GitHubToken == "" {
		s.GitHubToken = getenv(EnvGHToken)
	}
	return s
}

// Options are the inputs of the four-step checkpoint.
type Options struct {
	// Out receives the steps' lines and the completion report; ErrOut
	// (nil: Out) the warning when the code's state cannot be recorded.
	Out     io.Writer
	ErrOut  io.Writer
	Store   ckpt.Store
	ID      string
	Profile string // ProfileManual (default) or ProfileAuto
	// Dir is the project directory: where .ccc-progress.md and
	// .ccc-state.json live and the git snapshot is taken. It must be
	// absolute.
	Dir     string
	Tracker Tracker
	Now     func() time.Time // nil: time.Now
	// TrackerOnly runs step 3 alone, and records nothing else: the part
	// of the hooks' final checkpoint that ckpt leaves to ckpt-server
	// (package autockpt), which wrote the progress file and the code's
	// state itself. The report has that one step.
	TrackerOnly bool
}

// Step is what one step did.
type Step struct {
	Name    string `json:"name"`
	Skipped string `json:"skipped,omitempty"` // the skip line, when it had nothing to do
	Failed  string `json:"failed,omitempty"`  // the report's "Failed: …" line
}

// Report is what the four steps did.
type Report struct {
	Profile   string `json:"profile"`
	Steps     []Step `json:"steps"`
	Succeeded int    `json:"succeeded"`
	Total     int    `json:"total"`
	Commit    string `json:"commit,omitempty"`     // the snapshot's commit
	CommentID string `json:"comment_id,omitempty"` // the status comment
	Prompt    string `json:"prompt,omitempty"`     // the continuation prompt printed
}

// Summary is the completion report: "Checkpoint complete: N/M steps
// succeeded." and one "Failed: …" line per failed step.
func (r *Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Checkpoint complete: %d/%d steps succeeded.\n", r.Succeeded, r.Total)
	for _, s := range r.Steps {
		if s.Failed != "" {
			b.WriteString(s.Failed + "\n")
		}
	}
	return b.String()
}

func (r *Report) add(s Step) {
	r.Steps = append(r.Steps, s)
	r.Total++
	if s.Failed == "" {
		r.Succeeded++
	}
}

// checkSettings refuses options the steps cannot run with, before any
// step runs.
func (o *Options) check() error {
	switch o.Profile {
	case "":
		o.Profile = ProfileManual
	case ProfileManual, ProfileAuto:
	case "automated":
		o.Profile = ProfileAuto
	default:
		return fmt.Errorf("%w: --profile %q: use manual or auto", ckpt.ErrInvalid, o.Profile)
	}
	if err := ckpt.ValidateID(o.ID); err != nil {
		return err
	}
	if !filepath.IsAbs(o.Dir) {
		return fmt.Errorf("%w: the project directory %q is not absolute", ckpt.ErrInvalid, o.Dir)
	}
	if fi, err := os.Stat(o.Dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%w: --dir %s is not a directory: give the project directory", ckpt.ErrInvalid, o.Dir)
	}
	t := o.Tracker
	gh := t.GitHubRepo != "" || t.GitHubIssue != ""
	switch {
	case gh && t.LinearIssue != "":
		return fmt.Errorf("%w: give one issue tracker: --github-repo with --issue, or --linear-issue, not both", ckpt.ErrInvalid)
	case gh && (t.GitHubRepo == "" || t.GitHubIssue == ""):
		return fmt.Errorf("%w: a GitHub issue needs both --github-repo OWNER/NAME and --issue N", ckpt.ErrInvalid)
	case t.Timeout < 0:
		return fmt.Errorf("%w: --tracker-timeout %s is negative", ckpt.ErrInvalid, t.Timeout)
	}
	return nil
}

// Run runs ccc's (seed 001) four steps for checkpoint o.ID with
// o.Profile and prints their lines and the completion report on o.Out.
// Steps fail forward: each one's failure is a warning line and a "Failed:"
// line in the report, never an error. The error is for what stops the
// steps from starting: bad options (wrapping ckpt.ErrInvalid) or a
// checkpoint that cannot be read (ckpt.ErrNotFound, ckpt.ErrCorrupt, …).
// The checkpoint's state is read once; the only write to the store is the
// code's state (ckpt.EventCode) when it moved since the checkpoint recorded
// it, an extra that is not one of the four steps.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	c, err := o.Store.Get(ctx, o.ID, 0)
	if err != nil {
		return nil, err
	}
	out := o.Out
	statePath := filepath.Join(o.Dir, ccc.StateFile)
	state, err := ccc.ReadState(statePath)
	stateUsable := err == nil || errors.Is(err, fs.ErrNotExist)
	if !stateUsable {
		fmt.Fprintf(out, "Warning: %s unreadable (%v): its activeTaskFiles and checkpointCommentId are not used and it is left as it is.\n", ccc.StateFile, err)
		state = ccc.State{}
	}
	r := &Report{Profile: o.Profile}
	manual := o.Profile == ProfileManual
	if o.TrackerOnly {
		s, comment := upsertStatus(ctx, out, o, c, state, stateUsable, statePath, now().UTC())
		r.CommentID = comment
		r.add(s)
		fmt.Fprint(out, r.Summary())
		return r, nil
	}

	r.add(persistProgress(out, o.Dir, c))
	if manual {
		s, commit := gitSnapshot(ctx, out, o.Dir, c, state.ActiveTaskFiles)
		r.Commit = commit
		r.add(s)
	}
	errOut := o.ErrOut
	if errOut == nil {
		errOut = out
	}
	autockpt.RecordCode(ctx, errOut, o.Store, c, o.Dir, now().UTC()) // where the code is, after the snapshot
	s, comment := upsertStatus(ctx, out, o, c, state, stateUsable, statePath, now().UTC())
	r.CommentID = comment
	r.add(s)
	if manual {
		s, prompt := printContinuation(out, o.Dir)
		r.Prompt = prompt
		r.add(s)
	}
	fmt.Fprint(out, r.Summary())
	return r, nil
}

// persistProgress is step 1: .ccc-progress.md from the checkpoint.
func persistProgress(out io.Writer, dir string, c *ckpt.Checkpoint) Step {
	return Step{Name: "Progress file", Failed: autockpt.WriteProgress(out, dir, c)}
}

// gitSnapshot is step 2: commit the in-scope files, skip-aware.
func gitSnapshot(ctx context.Context, out io.Writer, dir string, c *ckpt.Checkpoint, active []string) (Step, string) {
	s := Step{Name: "Git snapshot"}
	var scope []string
	for _, p := range slices.Concat(c.Files.Created, c.Files.Modified, active) {
		if strings.TrimSpace(p) != "" && !slices.Contains(scope, p) {
			scope = append(scope, p)
		}
	}
	msg := gitsnap.CommitMessage(c.ID, c.Title, c.CurrentStep, c.Progress.Done, c.Progress.Total)
	res, err := gitsnap.Snapshot(ctx, dir, scope, msg)
	switch {
	case err != nil:
		fmt.Fprintf(out, "Warning: git snapshot failed: %v\n", err)
		s.Failed = fmt.Sprintf("Failed: Git snapshot (%s) — changes not committed.", stepReason(err))
		if res.Committed {
			s.Failed = fmt.Sprintf("Failed: Git snapshot (%s) — committed %s, but the index was not updated.", stepReason(err), shortHash(res.Commit))
		}
		return s, res.Commit
	case res.Committed:
		fmt.Fprintf(out, "Git snapshot committed %s: %s.\n", shortHash(res.Commit), strings.Join(res.Files, ", "))
		return s, res.Commit
	}
	fmt.Fprintln(out, res.Skipped)
	s.Skipped = res.Skipped
	return s, ""
}

// stepReason is the short cause of a step's failure for its report line:
// the file and what went wrong for a file error, else tracker.Reason.
func stepReason(err error) string {
	var te *tracker.Error
	if errors.As(err, &te) {
		return tracker.Reason(err)
	}
	return autockpt.Reason(err)
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// upsertStatus is step 3: the one "Checkpoint Status" comment of the issue.
func upsertStatus(ctx context.Context, out io.Writer, o Options, c *ckpt.Checkpoint, state ccc.State, stateUsable bool, statePath string, now time.Time) (Step, string) {
	s := Step{Name: "Issue tracker"}
	t := o.Tracker
	var (
		tr      tracker.Tracker
		service string
		issue   string
		err     error
	)
	switch {
	case t.GitHubRepo != "":
		service, issue = "GitHub", t.GitHubIssue
		if t.GitHubToken == "" {
			err = fmt.Errorf("no token: set %s (or %s) to a token that may write issues", EnvGitHubToken, EnvGHToken)
		} else {
			tr, err = github.New(github.Config{Repo: t.GitHubRepo, Token: t.GitHubToken, BaseURL: t.GitHubURL, Timeout: t.Timeout, Client: t.Client})
		}
	case t.LinearIssue != "" || state.LinearIssue != "" && t.LinearKey != "":
		service, issue = "Linear", t.LinearIssue
		if issue == "" {
			issue = state.LinearIssue
		}
		if t.LinearKey == "" {
			err = fmt.Errorf("no API key: set %s to a Linear personal API key", EnvLinearKey)
		} else {
			tr, err = linear.New(linear.Config{APIKey: t.LinearKey, URL: t.LinearURL, Timeout: t.Timeout, Client: t.Client})
		}
	default:
		s.Skipped = "Issue-tracker update skipped — no issue tracker configured."
		fmt.Fprintln(out, s.Skipped)
		return s, ""
	}
	s.Name = service + " update"
	fail := func(err error) (Step, string) {
		fmt.Fprintf(out, "Warning: %s update failed: %v\n", service, err)
		s.Failed = tracker.FailureLine(service, err)
		return s, ""
	}
	if err != nil {
		return fail(err)
	}
	var since time.Time
	if raw, ok := state.Extra[stateUpdatedKey]; ok {
		var at string
		if json.Unmarshal(raw, &at) == nil {
			if t, err := time.Parse(time.RFC3339Nano, at); err == nil {
				// The decisions after the last comment: one recorded in
				// the same instant was in it.
				since = t.Add(time.Nanosecond)
			}
		}
	}
	body := tracker.StatusComment(tracker.UpdateFromCheckpoint(c, since, now))
	comment, err := tr.Upsert(ctx, issue, state.CheckpointCommentID, body)
	if err != nil {
		return fail(err)
	}
	verb := "updated"
	if comment.ID != state.CheckpointCommentID {
		verb = "created"
	}
	fmt.Fprintf(out, "%s status comment %s on issue %s (%s).\n", service, verb, issue, comment.ID)
	if !stateUsable {
		fmt.Fprintf(out, "Warning: comment ID %s not stored: %s is unreadable; mend it, or the next checkpoint creates another comment.\n", comment.ID, ccc.StateFile)
		return s, comment.ID
	}
	state.CheckpointCommentID = comment.ID
	if state.Extra == nil {
		state.Extra = map[string]json.RawMessage{}
	}
	state.Extra[stateUpdatedKey], _ = json.Marshal(now.Format(time.RFC3339Nano))
	if err := ccc.WriteState(statePath, state); err != nil {
		fmt.Fprintf(out, "Warning: comment ID %s not stored in %s: %v\n", comment.ID, ccc.StateFile, err)
	}
	return s, comment.ID
}

// The box ccc (seed 001) prints the continuation prompt in.
const (
	promptBox = "╔══════════════════════════════════════════════════╗\n" +
		"║  CONTINUATION PROMPT                             ║\n" +
		"╚══════════════════════════════════════════════════╝\n"
	promptCopy     = "Copy this prompt into your next session's first message."
	promptTemplate = "Resume CIA-XXX. Current task: [task N of M]. Key files: [file list].\nNext action: [specific next step]."
)

// printContinuation is step 4: the Continuation Prompt section of
// .ccc-progress.md in the document's box, or the generic template.
func printContinuation(out io.Writer, dir string) (Step, string) {
	s := Step{Name: "Continuation prompt"}
	data, err := os.ReadFile(filepath.Join(dir, ccc.ProgressFile))
	prompt := ""
	if err == nil {
		prompt, err = ccc.ContinuationPrompt(data)
	}
	if err != nil {
		fmt.Fprintf(out, "Warning: %s unreadable: %v; here is a template to fill in.\n", ccc.ProgressFile, err)
		s.Failed = fmt.Sprintf("Failed: Continuation prompt (%s) — printed the generic template instead.", stepReason(err))
		prompt = promptTemplate
	}
	fmt.Fprintf(out, "\n%s\n%s\n\n%s\n\n", promptBox, prompt, promptCopy)
	return s, prompt
}
