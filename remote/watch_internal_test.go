package remote

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// FuzzScanEvents: any byte stream from a server parses without panic; a
// stream written as the server writes it gives back its events exactly.
func FuzzScanEvents(f *testing.F) {
	f.Add("change", `{"cursor":"1","kind":"event","id":"a","rev":1}`, ": keepalive\n\nid: 1\nevent: change\ndata: x\n\n")
	f.Add("error", `{"code":"invalid","message":"m"}`, "data:\n\nevent:\n")
	f.Add("", "", "\r\n:\n\n\n")
	f.Fuzz(func(t *testing.T, event, data, raw string) {
		_ = scanEvents(strings.NewReader(raw), func() {}, func(string, string) error { return nil })
		if strings.ContainsAny(event+data, "\r\n") || data == "" || strings.TrimSpace(event) != event {
			return
		}
		stream := fmt.Sprintf(": keepalive\n\nid: 9\nevent: %s\ndata: %s\n\n", event, data)
		var got [][2]string
		err := scanEvents(strings.NewReader(stream), func() {}, func(e, d string) error {
			got = append(got, [2]string{e, d})
			return nil
		})
		want := data
		if err != nil || len(got) != 1 || got[0][0] != event || got[0][1] != want {
			t.Fatalf("stream %q gave %q, %v; want [%q %q]", stream, got, err, event, want)
		}
	})
}

func TestScanEventsStopsOnEmitError(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	err := scanEvents(strings.NewReader("data: 1\n\ndata: 2\n\n"), func() {}, func(string, string) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("scanEvents: %v after %d events", err, n)
	}
}
