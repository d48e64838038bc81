package keeper

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// The protocol over the socket. Every message is a frame: a 4-byte
// big-endian length, then that many bytes. A request's frame is its op (one
// byte) and its fields; an answer's is its kind (one byte) and its fields.
// A field is a 4-byte big-endian length and its bytes: an ID or cursor as
// text, a number as 8 bytes big-endian, a domain value (event, checkpoint,
// signal, change) as internal/wire's JSON, anything else (list options, a
// page, an error, the keeper's status) as encoding/json's. A connection
// carries requests and their answers in turn; a watch's answer is a stream
// of change frames ended by an ok or error frame. A request may end with
// one more field than its op takes: its call options (callOptions), which
// a server store's client sends.

// Op is what a request asks the keeper to do.
type Op byte

// The requests: a ckpt.Store method each, and the keeper's own two.
const (
	OpAppend Op = iota + 1
	OpGet
	OpHistory
	OpList
	OpBeat
	OpDelete
	OpHead
	OpWatch
	OpStatus
	OpStop
	opEnd
)

// fieldsOf is how many fields each op's request carries.
var fieldsOf = [opEnd]int{OpAppend: 4, OpGet: 2, OpHistory: 3, OpList: 1, OpBeat: 2, OpDelete: 1, OpHead: 0, OpWatch: 1, OpStatus: 0, OpStop: 0}

// An append's flags field: AsCheckpointAgent in its lowest bit, the
// key's origin (ckpt.KeyOrigin) in the two above it.
const flagAsAgent = 1

// appendFlags is the flags field of an append under opts.
func appendFlags(opts ckpt.AppendOptions) int64 {
	f := int64(opts.KeyOrigin) << 1
	if opts.AsCheckpointAgent {
		f |= flagAsAgent
	}
	return f
}

// Answer kinds.
const (
	answerOK     byte = 0
	answerError  byte = 1
	answerChange byte = 2 // one change of a watch; more follow
)

// Limits on a frame: a request is one write or read and is small; an
// answer may hold a long history page.
const (
	maxRequest = 8 << 20
	maxAnswer  = 1 << 30
)

// Request is one decoded request.
type Request struct {
	Op      Op
	ID      string
	Event   ckpt.Event
	IfRev   int64
	AsAgent bool
	// KeyOrigin is the append's ckpt.AppendOptions.KeyOrigin.
	KeyOrigin ckpt.KeyOrigin
	Rev       int64 // Get's revision, History's from
	Limit     int64 // History's limit
	List      ckpt.ListOptions
	Signal    ckpt.Signal
	Cursor    string // Watch's from
	// The call options (sent by a server store's client, zero otherwise):
	// how many attempts the keeper's store makes (0: its own default;
	// spool.WithAttempts), and how long the client waits for the answer
	// (0: no limit of its own).
	Attempts int64
	Budget   time.Duration
}

// callOptionsLen is the call options field's length: two numbers.
const callOptionsLen = 16

// appendCallOptions returns the request frame req with the call options
// field added.
func appendCallOptions(req []byte, attempts int64, budget time.Duration) []byte {
	req = binary.BigEndian.AppendUint32(req, callOptionsLen)
	req = binary.BigEndian.AppendUint64(req, uint64(attempts))
	req = binary.BigEndian.AppendUint64(req, uint64(budget))
	binary.BigEndian.PutUint32(req, uint32(len(req)-4))
	return req
}

// callOptions reads the call options field into r.
func (r *Request) callOptions(b []byte) error {
	if len(b) != callOptionsLen {
		return errors.New("the call options field is not 16 bytes")
	}
	r.Attempts = int64(binary.BigEndian.Uint64(b))
	r.Budget = time.Duration(binary.BigEndian.Uint64(b[8:]))
	if r.Attempts < 0 || r.Budget < 0 {
		return errors.New("negative call options")
	}
	return nil
}

// errBadRequest wraps every decoding failure of a request: the socket is
// hostile input, and a request that does not decode is refused whole.
var errBadRequest error = &sentinel{ckpt.ErrInvalid, "not a keeper request"}

// sentinel is fmt.Errorf("%w: "+msg, err) as static data: a package-level
// fmt.Errorf runs at initialisation, in every ckpt process (docs/design.md,
// start-up round eight).
type sentinel struct {
	err error
	msg string
}

func (e *sentinel) Error() string { return e.err.Error() + ": " + e.msg }
func (e *sentinel) Unwrap() error { return e.err }

// DecodeRequest reads a request from a frame's bytes (without its length).
// It refuses, with an error wrapping ckpt.ErrInvalid, an unknown op, a
// wrong number of fields, a field that runs past the frame, a number that
// is not 8 bytes and a value that does not decode; it never panics.
func DecodeRequest(b []byte) (Request, error) {
	if len(b) == 0 || Op(b[0]) == 0 || Op(b[0]) >= opEnd {
		return Request{}, fmt.Errorf("%w: unknown operation", errBadRequest)
	}
	r := Request{Op: Op(b[0])}
	fields, err := splitFields(b[1:])
	if err != nil {
		return Request{}, err
	}
	if n := fieldsOf[r.Op]; len(fields) == n+1 {
		if err := r.callOptions(fields[n]); err != nil {
			return Request{}, fmt.Errorf("%w: %v", errBadRequest, err)
		}
		fields = fields[:n]
	}
	if len(fields) != fieldsOf[r.Op] {
		return Request{}, fmt.Errorf("%w: operation %d takes %d fields, got %d", errBadRequest, r.Op, fieldsOf[r.Op], len(fields))
	}
	switch r.Op {
	case OpAppend:
		r.ID = string(fields[0])
		err = errors.Join(unmarshalField(fields[1], &r.Event), number(fields[2], &r.IfRev))
		var flags int64
		err = errors.Join(err, number(fields[3], &flags))
		if flags < 0 || flags>>1 > int64(ckpt.KeyResent) {
			err = errors.Join(err, fmt.Errorf("append flags %d", flags))
		}
		r.AsAgent, r.KeyOrigin = flags&flagAsAgent != 0, ckpt.KeyOrigin(flags>>1)
	case OpGet:
		r.ID = string(fields[0])
		err = number(fields[1], &r.Rev)
	case OpHistory:
		r.ID = string(fields[0])
		err = errors.Join(number(fields[1], &r.Rev), number(fields[2], &r.Limit))
	case OpList:
		err = json.Unmarshal(fields[0], &r.List)
	case OpBeat:
		r.ID = string(fields[0])
		err = unmarshalField(fields[1], &r.Signal)
	case OpDelete:
		r.ID = string(fields[0])
	case OpWatch:
		r.Cursor = string(fields[0])
	}
	if err != nil {
		return Request{}, fmt.Errorf("%w: %v", errBadRequest, err)
	}
	return r, nil
}

// splitFields cuts b into its length-prefixed fields.
func splitFields(b []byte) ([][]byte, error) {
	var fields [][]byte
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, fmt.Errorf("%w: a field's length is cut short", errBadRequest)
		}
		n := binary.BigEndian.Uint32(b)
		b = b[4:]
		if uint64(n) > uint64(len(b)) {
			return nil, fmt.Errorf("%w: a field runs past the frame", errBadRequest)
		}
		fields = append(fields, b[:n:n])
		b = b[n:]
	}
	return fields, nil
}

func unmarshalField(b []byte, v any) error { return wire.Unmarshal(b, v) }

func number(b []byte, n *int64) error {
	if len(b) != 8 {
		return errors.New("a number field is not 8 bytes")
	}
	*n = int64(binary.BigEndian.Uint64(b))
	return nil
}

// encoder builds one frame: the length is filled in by frame.
type encoder struct{ b []byte }

func newFrame(kind byte) *encoder { return &encoder{b: append(make([]byte, 4, 256), kind)} }

func (e *encoder) bytes(p []byte) *encoder {
	e.b = binary.BigEndian.AppendUint32(e.b, uint32(len(p)))
	e.b = append(e.b, p...)
	return e
}

func (e *encoder) str(s string) *encoder { return e.bytes([]byte(s)) }

func (e *encoder) num(n int64) *encoder {
	return e.bytes(binary.BigEndian.AppendUint64(nil, uint64(n)))
}

// value appends v as JSON (internal/wire's codec: encoding/json's bytes).
func (e *encoder) value(v any) error {
	p, err := wire.Marshal(v)
	if err != nil {
		return err
	}
	e.bytes(p)
	return nil
}

// event appends e as two fields: its JSON, then its checksum (Sum, which
// the JSON leaves out: the history line carries it last).
func (e *encoder) event(ev ckpt.Event) error {
	if err := e.value(ev); err != nil {
		return err
	}
	e.str(ev.Sum)
	return nil
}

// decodeEvent reads an event written by encoder.event from its two fields.
func decodeEvent(fields [][]byte, e *ckpt.Event) error {
	if len(fields) < 2 {
		return errors.New("an event's fields are missing")
	}
	if err := unmarshalField(fields[0], e); err != nil {
		return err
	}
	e.Sum = string(fields[1])
	return nil
}

// frame returns the frame with its length set.
func (e *encoder) frame() []byte {
	binary.BigEndian.PutUint32(e.b, uint32(len(e.b)-4))
	return e.b
}

// readFrame reads one frame of at most limit bytes.
func readFrame(r io.Reader, limit int) ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(head[:])
	if uint64(n) > uint64(limit) || n == 0 {
		return nil, fmt.Errorf("%w: a frame of %d bytes (at most %d)", errBadRequest, n, limit)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	return b, nil
}

// errorFrame is the answer for err: httpapi's wire form of an error, so
// that the client rebuilds it as ckpt serve's clients do (httpapi.Error.Err).
func errorFrame(err error) []byte { return newFrame(answerError).bytes(errorJSON(err)).frame() }

// wireError is an error as it crosses the socket: httpapi's wire form,
// plus the typed errors the CLI words its advice from that the HTTP API
// does not carry (an unknown step and its suggestions).
type wireError struct {
	httpapi.Error
	StepNotFound *ckpt.StepNotFoundError `json:"step_not_found,omitempty"`
}

// errorJSON is err in its wire form.
func errorJSON(err error) []byte {
	w := wireError{Error: *httpapi.ErrorOf(err)}
	errors.As(err, &w.StepNotFound)
	p, jerr := json.Marshal(w)
	if jerr != nil {
		p, _ = json.Marshal(&httpapi.Error{Code: ckpt.CodeInternal, Message: err.Error()})
	}
	return p
}

// decodeError rebuilds the error of an error frame's field.
func decodeError(p []byte) error {
	var e wireError
	if err := json.Unmarshal(p, &e); err != nil || e.Code == "" {
		return fmt.Errorf("%w: the keeper's error answer does not decode", ckpt.ErrUnavailable)
	}
	if e.StepNotFound != nil && e.Code == ckpt.CodeInvalid {
		return e.StepNotFound
	}
	return e.Error.Err()
}
