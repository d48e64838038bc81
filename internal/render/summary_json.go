package render

import "github.com/ckpt-dev/ckpt"

// AppendSummaryJSON appends the JSON of s to dst: the same bytes as
// json.Marshal(s), written directly (ckpt ls --json writes one per
// checkpoint, and encoding/json's reflection and its re-validation of
// every time value were most of a 10,000-row listing). It is
// ckpt.AppendSummaryJSON, the root package's writer that the journal's
// lines use too; FuzzAppendSummaryJSON holds it to json.Marshal.
func AppendSummaryJSON(dst []byte, s *ckpt.Summary) ([]byte, error) {
	return ckpt.AppendSummaryJSON(dst, s)
}
