package ckpt

import (
	"encoding/json"
	"time"
)

// The data of the two events every `ckpt update` and `ckpt step` write,
// Patch and StepChange, is encoded and decoded without reflection when it
// is in the form json.Marshal writes (FuzzPatchJSON, FuzzStepChangeJSON
// hold the results equal to encoding/json's); any other data, and every
// other event type, goes through encoding/json.

// marshalData returns json.Marshal(data).
func marshalData(data any) ([]byte, error) {
	w := jsonWriter{ok: true}
	switch d := data.(type) {
	case Patch:
		w.patch(&d)
	case *Patch:
		if d == nil {
			return json.Marshal(data)
		}
		w.patch(d)
	case StepChange:
		w.stepChange(&d)
	case *StepChange:
		if d == nil {
			return json.Marshal(data)
		}
		w.stepChange(d)
	default:
		w.ok = false
	}
	if w.ok {
		return w.b, nil
	}
	return json.Marshal(data)
}

// unmarshalData decodes data into v, a pointer to a zero value, as
// json.Unmarshal does.
func unmarshalData(data []byte, v any) error {
	r := jsonReader{b: data, ok: true}
	switch p := v.(type) {
	case *Patch:
		var x Patch
		if r.patch(&x); r.ok && r.i == len(r.b) {
			*p = x
			return nil
		}
	case *StepChange:
		var x StepChange
		if r.stepChange(&x); r.ok && r.i == len(r.b) {
			*p = x
			return nil
		}
	}
	return json.Unmarshal(data, v)
}

func (w *jsonWriter) patch(p *Patch) {
	w.raw(`{`)
	n := len(w.b)
	w.optStrPtr(`,"title":`, p.Title)
	w.optStrPtr(`,"task_id":`, p.TaskID)
	w.optStrPtr(`,"parent":`, p.Parent)
	w.optStrPtr(`,"stage":`, p.Stage)
	w.optStrPtr(`,"phase":`, p.Phase)
	w.optStrPtr(`,"current_step":`, p.CurrentStep)
	if p.Status != nil {
		w.raw(`,"status":`)
		w.str(string(*p.Status))
	}
	w.optStrPtr(`,"status_reason":`, p.StatusReason)
	if p.Agent != nil {
		w.raw(`,"agent":`)
		w.agent(*p.Agent)
	}
	if p.Progress != nil {
		w.raw(`,"progress":{"done":`)
		w.int(int64(p.Progress.Done))
		w.raw(`,"total":`)
		w.int(int64(p.Progress.Total))
		w.raw(`}`)
	}
	w.strs(`,"add_labels":`, p.AddLabels)
	w.strs(`,"remove_labels":`, p.RemoveLabels)
	w.strs(`,"files_created":`, p.FilesCreated)
	w.strs(`,"files_modified":`, p.FilesModified)
	w.optStrPtr(`,"last_processed":`, p.LastProcessed)
	w.optStrPtr(`,"next_to_process":`, p.NextToProcess)
	w.optStrPtr(`,"notes":`, p.Notes)
	if p.Resumable != nil {
		w.raw(`,"resumable":`)
		w.bool(*p.Resumable)
	}
	w.optStrPtr(`,"instructions":`, p.Instructions)
	if p.NextSteps != nil {
		if *p.NextSteps == nil {
			w.ok = false // null: left to encoding/json
		}
		w.raw(`,"next_steps":[`)
		for i, s := range *p.NextSteps {
			if i > 0 {
				w.raw(`,`)
			}
			w.str(s)
		}
		w.raw(`]`)
	}
	if p.MaxCycles != nil {
		w.raw(`,"max_cycles":`)
		w.int(int64(*p.MaxCycles))
	}
	w.scores(p.ReviewScores)
	w.meta(p.Meta)
	if p.Interval != nil {
		w.raw(`,"interval":`)
		w.str(time.Duration(*p.Interval).String())
	}
	w.close(n, '}')
}

func (w *jsonWriter) optStrPtr(key string, s *string) {
	if s != nil {
		w.raw(key)
		w.str(*s)
	}
}

func (w *jsonWriter) stepChange(s *StepChange) {
	w.raw(`{"id":`)
	w.str(s.ID)
	if s.MustExist {
		w.raw(`,"must_exist":true`)
	}
	w.optStr(`,"title":`, s.Title)
	w.optStr(`,"status":`, string(s.Status))
	w.optStr(`,"phase":`, s.Phase)
	w.optStr(`,"by":`, s.By)
	w.optStr(`,"output":`, s.Output)
	w.optStr(`,"notes":`, s.Notes)
	w.raw(`}`)
}

var patchFields = []string{"title", "task_id", "parent", "stage", "phase", "current_step", "status",
	"status_reason", "agent", "progress", "add_labels", "remove_labels", "files_created", "files_modified",
	"last_processed", "next_to_process", "notes", "resumable", "instructions", "next_steps", "max_cycles",
	"review_scores", "meta", "interval"}

func (r *jsonReader) patch(p *Patch) {
	r.object(patchFields, func(k string) {
		switch k {
		case "title":
			p.Title = r.strPtr()
		case "task_id":
			p.TaskID = r.strPtr()
		case "parent":
			p.Parent = r.strPtr()
		case "stage":
			p.Stage = r.strPtr()
		case "phase":
			p.Phase = r.strPtr()
		case "current_step":
			p.CurrentStep = r.strPtr()
		case "status":
			s := Status(r.str())
			p.Status = &s
		case "status_reason":
			p.StatusReason = r.strPtr()
		case "agent":
			p.Agent = &Agent{}
			r.agent(p.Agent)
		case "progress":
			p.Progress = &ProgressSet{}
			r.object([]string{"done", "total"}, func(k string) {
				if k == "done" {
					p.Progress.Done = r.intv()
				} else {
					p.Progress.Total = r.intv()
				}
			})
		default:
			r.patchRest(p, k)
		}
	})
}

// patchRest reads the members of a patch after progress.
func (r *jsonReader) patchRest(p *Patch, k string) {
	switch k {
	case "add_labels":
		p.AddLabels = r.strs()
	case "remove_labels":
		p.RemoveLabels = r.strs()
	case "files_created":
		p.FilesCreated = r.strs()
	case "files_modified":
		p.FilesModified = r.strs()
	case "last_processed":
		p.LastProcessed = r.strPtr()
	case "next_to_process":
		p.NextToProcess = r.strPtr()
	case "notes":
		p.Notes = r.strPtr()
	case "resumable":
		b := r.bool()
		p.Resumable = &b
	case "instructions":
		p.Instructions = r.strPtr()
	case "next_steps":
		s := r.strs()
		p.NextSteps = &s
	case "max_cycles":
		n := r.intv()
		p.MaxCycles = &n
	case "review_scores":
		p.ReviewScores = r.scores()
	case "meta":
		p.Meta = r.meta()
	case "interval":
		var d Duration
		start := r.i
		r.str()
		if r.ok && d.UnmarshalJSON(r.b[start:r.i]) != nil {
			r.ok = false
		}
		p.Interval = &d
	}
}

func (r *jsonReader) strPtr() *string {
	s := r.str()
	return &s
}

func (r *jsonReader) stepChange(s *StepChange) {
	r.object([]string{"id", "must_exist", "title", "status", "phase", "by", "output", "notes"}, func(k string) {
		switch k {
		case "id":
			s.ID = r.str()
		case "must_exist":
			s.MustExist = r.bool()
		case "title":
			s.Title = r.str()
		case "status":
			s.Status = StepStatus(r.str())
		case "phase":
			s.Phase = r.str()
		case "by":
			s.By = r.str()
		case "output":
			s.Output = r.str()
		default:
			s.Notes = r.str()
		}
	})
}
