package ckpt

import "encoding/json"

// DecodeSummaryJSON decodes data into *s (overwritten whole) as
// json.Unmarshal into a zero Summary does. Input in exactly the form
// json.Marshal writes a Summary without presence (the form a store's index
// keeps) is read without reflection, about six times faster: a listing of
// every checkpoint decodes one per row. Anything else, an error included,
// goes to json.Unmarshal, so the result is always its result
// (FuzzDecodeSummaryJSON).
func DecodeSummaryJSON(data []byte, s *Summary) error {
	if decodeSummaryFast(data, s) {
		return nil
	}
	*s = Summary{}
	return json.Unmarshal(data, s)
}

func decodeSummaryFast(data []byte, s *Summary) bool {
	*s = Summary{}
	r := jsonReader{b: data, ok: true}
	r.summary(s)
	return r.ok && r.i == len(r.b)
}

var summaryFields = []string{"id", "rev", "parent", "labels", "agent", "session_id", "title", "task_id",
	"stage", "phase", "status", "current_step", "progress", "heartbeat", "active_blockers",
	"blocking_errors", "partial", "messages", "archived", "started_at", "updated_at", "completed_at"}

func (r *jsonReader) summary(s *Summary) {
	r.object(summaryFields, func(k string) {
		switch k {
		case "id":
			s.ID = r.str()
		case "rev":
			s.Rev = r.int()
		case "parent":
			s.Parent = r.str()
		case "labels":
			s.Labels = r.strs()
		case "agent":
			r.agent(&s.Agent)
		case "session_id":
			s.SessionID = r.str()
		case "title":
			s.Title = r.str()
		case "task_id":
			s.TaskID = r.str()
		case "stage":
			s.Stage = r.str()
		case "phase":
			s.Phase = r.str()
		case "status":
			s.Status = Status(r.str())
		case "current_step":
			s.CurrentStep = r.str()
		case "progress":
			r.progress(&s.Progress)
		case "heartbeat":
			r.heartbeat(&s.Heartbeat)
		default:
			r.summaryRest(s, k)
		}
	})
}

// summaryRest reads the members of a summary after its heartbeat.
func (r *jsonReader) summaryRest(s *Summary, k string) {
	switch k {
	case "active_blockers":
		s.ActiveBlockers = r.intv()
	case "blocking_errors":
		s.BlockingErrors = r.intv()
	case "partial":
		s.Partial = r.bool()
	case "messages":
		s.Messages = r.intv()
	case "archived":
		s.Archived = r.archive()
	case "started_at":
		s.StartedAt = r.time()
	case "updated_at":
		s.UpdatedAt = r.time()
	default:
		s.CompletedAt = r.timePtr()
	}
}
