package render

import "testing"

func TestRedraw(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new []string
		want     string
	}{
		{"first frame clears the screen", nil, []string{"head", "a"},
			"\x1b[H\x1b[2J\x1b[1;1Hhead\x1b[K\x1b[2;1Ha\x1b[K\x1b[3;1H"},
		{"nothing changed writes nothing", []string{"head", "a"}, []string{"head", "a"}, ""},
		{"one changed line is the only one written", []string{"head", "a", "b", "c"}, []string{"head", "a", "B", "c"},
			"\x1b[3;1HB\x1b[K\x1b[5;1H"},
		{"a longer frame writes the new lines", []string{"head"}, []string{"head", "a", "b"},
			"\x1b[2;1Ha\x1b[K\x1b[3;1Hb\x1b[K\x1b[4;1H"},
		{"a shorter frame clears what is below it", []string{"head", "a", "b"}, []string{"head"},
			"\x1b[2;1H\x1b[J\x1b[2;1H"},
		{"an empty frame clears the screen's old lines", []string{"a"}, []string{},
			"\x1b[1;1H\x1b[J\x1b[1;1H"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(Redraw(tc.old, tc.new)); got != tc.want {
				t.Errorf("Redraw(%q, %q)\n got %q\nwant %q", tc.old, tc.new, got, tc.want)
			}
		})
	}
}
