package cmdutil

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteJSON prints v on w as indented JSON, the form of every --json.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// PrintWarning prints msg on w as one `ckpt: warning: …` line.
func PrintWarning(w io.Writer, msg string) {
	fmt.Fprintf(w, "ckpt: warning: %s\n", strings.Join(strings.Fields(msg), " "))
}
