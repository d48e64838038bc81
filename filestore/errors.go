package filestore

import (
	"bytes"
	"context"
	"errors"
	"io/fs"

	"github.com/ckpt-dev/ckpt"
)

// OpenErrors implements ckpt.ErrorReader: checkpoint id's errors not yet
// cleared, as Get's ActiveErrors. It takes no lock and reads no liveness
// record. When state.json is current and holds no errors member (a
// checkpoint that never recorded an error: the usual case after a shell
// command) it answers from the checked envelope without decoding the
// state; anything else is Get's read, with Get's errors.
func (s *Store) OpenErrors(ctx context.Context, id string) ([]ckpt.ErrorItem, error) {
	if err := s.begin(ctx, id); err != nil {
		return nil, err
	}
	f := s.files(id)
	if err := realDir(f.dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err // never read through a link
	}
	if noErrors(f) {
		return nil, nil
	}
	cur, err := s.load(f)
	if err != nil {
		return nil, err
	}
	if cur.state == nil {
		return nil, notFound(id)
	}
	return cur.state.ActiveErrors(), nil
}

// errorsMember is how the state's errors member starts: wire and
// encoding/json both write it without spaces, and the state's checksum
// rules out any other hand. The same bytes elsewhere (a key of meta) only
// send the read the long way.
var errorsMember = []byte(`"errors":`)

// noErrors reports that f's state.json is current, in the sense of load's
// first case (read before the history is measured, and covering all of
// it), is a sound envelope of f's checkpoint, and has no errors member.
// Any doubt is false: the caller then reads the state the long way.
func noErrors(f files) bool {
	bufp := readBuffers.Get().(*[]byte)
	defer readBuffers.Put(bufp)
	data, err := readFile(f.state(), *bufp)
	if err != nil {
		return false
	}
	*bufp = data
	size, err := fileSize(f.history())
	if err != nil {
		return false
	}
	return currentWithoutErrors(data, f.id, size)
}

// currentWithoutErrors reports that data is a sound state envelope of id
// covering a history of size bytes, whose state has no errors member.
func currentWithoutErrors(data []byte, id string, size int64) bool {
	env, state, err := splitEnvelope(data, id)
	return err == nil && env.HistorySize == size && !bytes.Contains(state, errorsMember)
}
