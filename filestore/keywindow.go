package filestore

import (
	"bytes"

	"github.com/ckpt-dev/ckpt"
)

// keyWindow is the idempotency keys of a checkpoint's last ckpt.KeyWindow
// events, as this Store last wrote it (written.keys): with the history
// proved unchanged since (takeWritten), a key it lacks is in none of them,
// and a keyed append skips reading up to KeyWindow lines back
// (findKey). Only this Store's memory has one, built at its second keyed
// append of the checkpoint, so a process that appends once (a ckpt
// command, a hook) never pays for building it.
type keyWindow struct {
	seqs []int64 // the keyed events' sequence numbers, oldest first
	keys []string
	set  map[string]int // key -> how many of keys hold it
}

// has reports whether one of the window's events has key.
func (w *keyWindow) has(key string) bool { return w.set[key] > 0 }

// add records the event seq with key ("" for none) as the newest, and
// drops the keys of events that fell out of the window.
func (w *keyWindow) add(seq int64, key string) {
	if key != "" {
		w.seqs, w.keys = append(w.seqs, seq), append(w.keys, key)
		w.set[key]++
	}
	drop := 0
	for drop < len(w.seqs) && w.seqs[drop] <= seq-int64(ckpt.KeyWindow) {
		if w.set[w.keys[drop]]--; w.set[w.keys[drop]] == 0 {
			delete(w.set, w.keys[drop])
		}
		drop++
	}
	if drop > 0 {
		w.seqs, w.keys = w.seqs[drop:], w.keys[drop:]
	}
}

// readKeyWindow reads the keys of the last KeyWindow events of the history
// that ends at byte end. It returns nil when a line in the window does not
// decode: the caller then searches the history itself (findKey).
func readKeyWindow(path string, end int64) *keyWindow {
	buf, start, err := readWindow(path, end)
	if err != nil {
		return nil
	}
	lines := windowLines(buf, start)
	w := &keyWindow{set: map[string]int{}}
	for i := len(lines) - 1; i >= 0; i-- { // oldest first
		line := lines[i]
		if !bytes.Contains(line, []byte(`"key":`)) {
			continue
		}
		e, err := ckpt.DecodeLine(line)
		if err != nil {
			return nil
		}
		if e.Key != "" {
			w.seqs, w.keys = append(w.seqs, e.Seq), append(w.keys, e.Key)
			w.set[e.Key]++
		}
	}
	return w
}
