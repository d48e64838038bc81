package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestStringArrayIsPflags: stringArrayVar's flag parses, reads back
// (GetStringArray), shows in help and resets (SliceValue) exactly as
// pflag's own StringArrayVar with no default.
func TestStringArrayIsPflags(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"--f", "a"},
		{"--f", "a,b", "--f", `say "hi"`, "--f", "", "--f=x y"},
	} {
		var ours, theirs []string
		mine := pflag.NewFlagSet("ours", pflag.ContinueOnError)
		stringArrayVar(mine, &ours, "f", "a `PATH` (repeat)")
		ref := pflag.NewFlagSet("theirs", pflag.ContinueOnError)
		ref.StringArrayVar(&theirs, "f", nil, "a `PATH` (repeat)")
		if err := mine.Parse(args); err != nil {
			t.Fatal(err)
		}
		if err := ref.Parse(args); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ours, theirs) {
			t.Errorf("%q parsed as %q; pflag's: %q", args, ours, theirs)
		}
		got, err1 := mine.GetStringArray("f")
		want, err2 := ref.GetStringArray("f")
		if !slices.Equal(got, want) || (err1 == nil) != (err2 == nil) {
			t.Errorf("%q: GetStringArray %q, %v; pflag's: %q, %v", args, got, err1, want, err2)
		}
		if a, b := mine.FlagUsages(), ref.FlagUsages(); a != b {
			t.Errorf("%q: help %q; pflag's %q", args, a, b)
		}
		sv := mine.Lookup("f").Value.(pflag.SliceValue)
		rv := ref.Lookup("f").Value.(pflag.SliceValue)
		_ = sv.Append("z")
		_ = rv.Append("z")
		if !slices.Equal(sv.GetSlice(), rv.GetSlice()) {
			t.Errorf("%q: after Append %q; pflag's %q", args, sv.GetSlice(), rv.GetSlice())
		}
		_ = sv.Replace([]string{"r"})
		_ = rv.Replace([]string{"r"})
		if !slices.Equal(ours, theirs) {
			t.Errorf("%q: after Replace %q; pflag's %q", args, ours, theirs)
		}
	}
}

// TestHelpListsFlagsByName: a verb's help lists its flags sorted by name
// however it is asked for (a line that does not ask for help leaves
// pflag's sorting off, asksHelp).
func TestHelpListsFlagsByName(t *testing.T) {
	h := newHarness(t)
	for _, args := range [][]string{
		{"update", "--help"}, {"update", "x", "-h"}, {"--store", "s", "update", "--help=true"},
		{"help", "update"}, {"step", "--help"},
	} {
		out := h.OK(args...)
		_, section, _ := strings.Cut(out, "\nFlags:\n")
		section, _, _ = strings.Cut(section, "\n\n")
		var names []string
		for _, line := range strings.Split(section, "\n") {
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			if strings.HasPrefix(f[0], "--") {
				names = append(names, f[0])
			} else if len(f) > 1 && strings.HasPrefix(f[0], "-") && strings.HasPrefix(f[1], "--") {
				names = append(names, f[1])
			}
		}
		if len(names) < 5 || !slices.IsSorted(names) {
			t.Errorf("ckpt %s lists its flags as %q; want them by name", strings.Join(args, " "), names)
		}
	}
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"update", "x", "--stage", "S"}, false},
		{[]string{"update", "x", "--", "-h"}, false},
		{[]string{"update", "--help"}, true},
		{[]string{"update", "-h"}, true},
		{[]string{"update", "-jh"}, true},
	} {
		if got := asksHelp(c.args); got != c.want {
			t.Errorf("asksHelp(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}
