package pgstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ckpt-dev/ckpt"
)

// A prepared one-row fast statement (fastsql.go) is sent below pgx's
// query layer: its 21 parameters are encoded here, each in PostgreSQL's
// binary format, straight from the row, and its one result row is read
// from the wire. pgx's Query would look up an encode plan per parameter
// by reflection, build an argument slice and a Rows, and scan through
// more plans: with one Store per writer that was about a fifth of the
// client's CPU per append (BenchmarkPeer). The statement is prepared by
// pgx (its statement map, per connection) under a name of its own.

// oneParamOIDs are the types of the one-row statements' parameters $1..$21
// (fastsql.go numbers them).
var oneParamOIDs = [...]uint32{
	pgtype.TextOID, pgtype.Int8OID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, // id, rev, last_sum, sum, state, summary
	pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, pgtype.TextOID, pgtype.TextArrayOID, pgtype.BoolOID, // status, agent_id, agent_name, parent, labels, archived
	pgtype.TimestamptzOID, pgtype.TimestamptzOID, pgtype.TextOID, pgtype.ByteaOID, pgtype.TextOID, pgtype.BoolOID, // updated_at, at, key, line, type, check_at
	pgtype.Float8OID, pgtype.Int8OID, pgtype.TextOID, // skew, key window, change kind
}

// oneResultOIDs are the types of its result columns: the ID, the
// server's clock, the liveness columns.
var oneResultOIDs = [...]uint32{pgtype.TextOID, pgtype.TimestamptzOID, pgtype.TimestamptzOID, pgtype.JSONOID}

var (
	binaryParams  = func() []int16 { f := make([]int16, len(oneParamOIDs)); fillOnes(f); return f }()
	binaryResults = func() []int16 { f := make([]int16, len(oneResultOIDs)); fillOnes(f); return f }()
)

func fillOnes(f []int16) {
	for i := range f {
		f[i] = 1
	}
}

// errNotDirect: the prepared statement's description is not the one this
// code encodes for (it cannot be, but a mismatch must not send bytes of
// the wrong type); the caller runs it through pgx's Query instead.
var errNotDirect = errors.New("pgstore: the fast statement's description is not the expected one")

// oneStatementName names the prepared form of sql on a connection.
func oneStatementName(sql string) string {
	switch sql {
	case oneSQL:
		return "ckpt_fast_keyed"
	case oneSetSQL:
		return "ckpt_fast_keyed_set"
	case oneUnkeyedSetSQL:
		return "ckpt_fast_unkeyed_set"
	}
	return "ckpt_fast_unkeyed"
}

// paramBuffers holds the buffers the parameters are encoded into
// (*[]byte); the statement has sent them before execOne returns.
var paramBuffers = sync.Pool{New: func() any { return new([]byte) }}

// execOne runs sql, oneSQL or oneUnkeyedSQL, prepared on conn, for r, and
// reads its result: matched when the row was updated. errNotDirect says
// nothing was sent.
func execOne(ctx context.Context, conn *pgx.Conn, sql string, r *fastRow) (fastResult, error) {
	sd, err := conn.Prepare(ctx, oneStatementName(sql), sql)
	if err != nil {
		return fastResult{}, err
	}
	if !describedAs(sd) {
		return fastResult{}, errNotDirect
	}
	bp := paramBuffers.Get().(*[]byte)
	defer paramBuffers.Put(bp)
	var values [len(oneParamOIDs)][]byte
	buf := encodeOne((*bp)[:0], r, &values)
	*bp = buf
	rr := conn.PgConn().ExecStatement(ctx, sd, values[:], binaryParams, binaryResults)
	res := fastResult{}
	for rr.NextRow() {
		res, err = decodeOneResult(rr.Values())
		if err != nil {
			rr.Close()
			return fastResult{}, err
		}
	}
	if _, err := rr.Close(); err != nil { // up to ReadyForQuery: the commit's outcome
		return fastResult{}, err
	}
	return res, nil
}

// describedAs says whether sd takes and returns what execOne encodes and
// decodes.
func describedAs(sd *pgconn.StatementDescription) bool {
	if len(sd.ParamOIDs) != len(oneParamOIDs) || len(sd.Fields) != len(oneResultOIDs) {
		return false
	}
	for i, oid := range sd.ParamOIDs {
		if oid != oneParamOIDs[i] {
			return false
		}
	}
	for i, f := range sd.Fields {
		if f.DataTypeOID != oneResultOIDs[i] {
			return false
		}
	}
	return true
}

// encodeOne appends r's parameters to buf in binary formats and points
// values at them (nil for none: no parameter is NULL).
func encodeOne(buf []byte, r *fastRow, values *[len(oneParamOIDs)][]byte) []byte {
	var ends [len(oneParamOIDs)]int
	put := func(i int, b []byte) {
		buf = append(buf, b...)
		ends[i] = len(buf)
	}
	str := func(i int, s string) {
		buf = append(buf, s...)
		ends[i] = len(buf)
	}
	i8 := func(i int, v int64) {
		buf = binary.BigEndian.AppendUint64(buf, uint64(v))
		ends[i] = len(buf)
	}
	boolean := func(i int, v bool) {
		b := byte(0)
		if v {
			b = 1
		}
		buf = append(buf, b)
		ends[i] = len(buf)
	}
	stamp := func(i int, t time.Time) {
		buf = binary.BigEndian.AppendUint64(buf, uint64(microsSinceY2K(t)))
		ends[i] = len(buf)
	}
	str(0, r.id)
	i8(1, r.rev)
	str(2, r.lastSum)
	str(3, r.event.Sum)
	put(4, r.row.state)
	put(5, r.row.summary)
	str(6, r.row.status)
	str(7, r.row.agentID)
	str(8, r.row.agentName)
	str(9, r.row.parent)
	buf = appendTextArray(buf, r.row.labels)
	ends[10] = len(buf)
	boolean(11, r.row.archived)
	stamp(12, r.row.updatedAt)
	stamp(13, r.event.At)
	str(14, r.key)
	put(15, r.line)
	str(16, string(r.event.Type))
	boolean(17, r.checkAt)
	buf = binary.BigEndian.AppendUint64(buf, math.Float64bits(ckpt.MaxClockSkew.Seconds()))
	ends[18] = len(buf)
	i8(19, int64(ckpt.KeyWindow))
	str(20, string(ckpt.ChangeEvent))
	start := 0
	for i, end := range ends {
		values[i] = buf[start:end:end]
		start = end
	}
	return buf
}

// appendTextArray appends labels as a one-dimensional text[] in binary
// format: dimensions, a has-nulls flag, the element type, then each
// dimension's length and lower bound, then each element's length and
// bytes (an empty array has no dimensions).
func appendTextArray(buf []byte, labels []string) []byte {
	ndim := uint32(1)
	if len(labels) == 0 {
		ndim = 0
	}
	buf = binary.BigEndian.AppendUint32(buf, ndim)
	buf = binary.BigEndian.AppendUint32(buf, 0)
	buf = binary.BigEndian.AppendUint32(buf, pgtype.TextOID)
	if ndim == 0 {
		return buf
	}
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(labels)))
	buf = binary.BigEndian.AppendUint32(buf, 1)
	for _, l := range labels {
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(l)))
		buf = append(buf, l...)
	}
	return buf
}

// y2kMicros is 2000-01-01 UTC, PostgreSQL's epoch, in microseconds after
// Unix's.
const y2kMicros = 946_684_800 * 1_000_000

// microsSinceY2K is t as a binary timestamptz: microseconds since
// PostgreSQL's epoch, truncated as pgx truncates.
func microsSinceY2K(t time.Time) int64 {
	return t.Unix()*1_000_000 + int64(t.Nanosecond())/1_000 - y2kMicros
}

// timeFromY2K reads a binary timestamptz.
func timeFromY2K(b []byte) (time.Time, error) {
	if len(b) != 8 {
		return time.Time{}, fmt.Errorf("pgstore: a timestamptz of %d bytes", len(b))
	}
	v := int64(binary.BigEndian.Uint64(b))
	if v == math.MaxInt64 || v == math.MinInt64 {
		return time.Time{}, errors.New("pgstore: an infinite timestamptz")
	}
	us := v + y2kMicros
	return time.Unix(us/1_000_000, (us%1_000_000)*1_000).UTC(), nil
}

// decodeOneResult reads the statement's result row: the ID (unused: one
// row), the server's clock, the last beat (NULL: none) and the presence.
func decodeOneResult(v [][]byte) (fastResult, error) {
	if len(v) != len(oneResultOIDs) {
		return fastResult{}, fmt.Errorf("pgstore: the fast statement returned %d columns", len(v))
	}
	now, err := timeFromY2K(v[1])
	if err != nil {
		return fastResult{}, err
	}
	res := fastResult{matched: true, dbNow: now}
	if v[2] != nil {
		beat, err := timeFromY2K(v[2])
		if err != nil {
			return fastResult{}, err
		}
		res.beat = &beat
	}
	if v[3] != nil {
		res.presence = append([]byte(nil), v[3]...) // v is the connection's buffer
	}
	return res, nil
}
