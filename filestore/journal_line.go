package filestore

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/ckpt-dev/ckpt/internal/wire"
)

// appendEntry appends e's journal line (without its newline) to dst: the
// bytes of json.Marshal(e), written without reflection (every append
// writes one, and encoding/json's first use is a cost each short-lived
// process paid). A string that would need an escape, or a time json.Marshal
// refuses, is left to json.Marshal (FuzzJournalEntry).
func appendEntry(dst []byte, e *jentry) ([]byte, error) {
	b := append(dst, `{"kind":`...)
	ok := true
	str := func(s string) {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				ok = false
			}
		}
		b = append(append(append(b, '"'), s...), '"')
	}
	str(string(e.Kind))
	b = append(b, `,"id":`...)
	str(e.ID)
	b = append(b, `,"rev":`...)
	b = strconv.AppendInt(b, e.Rev, 10)
	if e.Type != "" {
		b = append(b, `,"type":`...)
		str(string(e.Type))
	}
	b = append(b, `,"at":`...)
	if y := e.At.Year(); y < 0 || y > 9999 {
		ok = false
	}
	if _, off := e.At.Zone(); off%60 != 0 || off <= -24*3600 || off >= 24*3600 {
		ok = false
	}
	b = append(e.At.AppendFormat(append(b, '"'), time.RFC3339Nano), '"')
	if e.Sum != "" {
		b = append(b, `,"sum":`...)
		str(e.Sum)
	}
	if e.Size != 0 {
		b = append(b, `,"size":`...)
		b = strconv.AppendInt(b, e.Size, 10)
	}
	if e.Summary != nil {
		var err error
		b = append(b, `,"summary":`...)
		if b, err = wire.Append(b, e.Summary); err != nil {
			ok = false
		}
	}
	b = append(b, '}')
	if ok {
		return b, nil
	}
	line, err := json.Marshal(e)
	if err != nil {
		return dst, err
	}
	return append(dst, line...), nil
}
