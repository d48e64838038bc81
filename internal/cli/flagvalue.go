package cli

import (
	"bytes"
	"encoding/csv"
	"strings"

	"github.com/spf13/pflag"
)

// stringArrayVar defines a repeatable string flag with no default, as
// pflag's StringArrayVar(p, name, nil, usage) does (the same type name,
// help and parsing), without formatting the empty default through
// encoding/csv and a 4 KB buffer for every flag of the command each time
// a ckpt process starts. Its DefValue is "" (pflag's is "[]"): help leaves
// out a default that is "" for a value type it does not know, as it
// leaves out pflag's "[]".
func stringArrayVar(fl *pflag.FlagSet, p *[]string, name, usage string) {
	*p = nil
	fl.VarPF(&stringArray{value: p}, name, "", usage).DefValue = ""
}

// stringArray is pflag's stringArray value (pflag.SliceValue too).
type stringArray struct {
	value   *[]string
	changed bool
}

func (s *stringArray) Set(v string) error {
	if !s.changed {
		*s.value = []string{v}
		s.changed = true
	} else {
		*s.value = append(*s.value, v)
	}
	return nil
}

func (s *stringArray) Append(v string) error {
	*s.value = append(*s.value, v)
	return nil
}

func (s *stringArray) Replace(vs []string) error {
	*s.value = append([]string(nil), vs...)
	return nil
}

func (s *stringArray) GetSlice() []string { return append([]string{}, *s.value...) }

func (s *stringArray) Type() string { return "stringArray" }

// String is pflag's: the values as one CSV record in brackets, so that
// FlagSet.GetStringArray reads them back.
func (s *stringArray) String() string {
	if len(*s.value) == 0 {
		return "[]"
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	_ = w.Write(*s.value)
	w.Flush()
	return "[" + strings.TrimSuffix(b.String(), "\n") + "]"
}
