package pgstore

import (
	"time"

	"github.com/ckpt-dev/ckpt"
)

// The statements of the fast path (batch.go). A batch of one append runs
// a statement with scalar parameters, a larger batch one with arrays; and
// each comes in two forms, keyed and unkeyed: an append without an
// idempotency key (most appends: notes, steps, `ckpt update` without
// --key) runs a statement that does not mention ckpt_keys at all, so its
// transaction neither probes that table nor opens it and its index for
// an INSERT that would write nothing. Parameters $1..$14 and $16..$19
// mean the same in all four; the keyed forms add $15 (the key) and $20
// (ckpt.KeyWindow); $21 is the change's kind.

// batchSQL writes a batch in ONE statement, which is its whole
// transaction (PostgreSQL's implicit transaction of a lone statement: no
// BEGIN, no COMMIT, one round trip). Its first step takes the append locks
// of all its checkpoints (locked: advisory locks in ID order, the rows
// come sorted, so batches of several processes sharing checkpoints cannot
// deadlock); the UPDATE's WHERE waits for it as a one-time filter (an
// uncorrelated EXISTS: an InitPlan run before the first row is read), so
// every lock is held before the transaction's first write gives it its ID
// (see the change feed). Each row is updated only WHERE its revision and
// last checksum are still the remembered ones (the statement's snapshot
// may predate a writer that committed while it waited for a lock; READ
// COMMITTED then checks the WHERE again on the newest version of the row,
// which that writer changed, so the row does not match), its key is not
// among the last ckpt.KeyWindow events and, when check_at, its time is at
// most $19 seconds ahead of the server's clock; the event, change and key
// are inserted from the update's result.
const batchSQL = `WITH v AS (
	SELECT * FROM unnest($1::text[], $2::int8[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
		$8::text[], $9::text[], $10::text[], $11::text[], $12::bool[], $13::timestamptz[], $14::timestamptz[],
		$16::bytea[], $17::text[], $18::bool[], $15::text[])
		AS v(id, rev, last_sum, sum, state, summary, status, agent_id, agent_name, parent, labels, archived,
			updated_at, at, line, type, check_at, key)
)` + batchUpdate + `
		AND (v.key = '' OR NOT EXISTS (SELECT 1 FROM ckpt_keys k WHERE k.id = v.id AND k.key = v.key AND k.seq > v.rev - $20::int8))` +
	batchTail + `, keyed AS (
	INSERT INTO ckpt_keys (id, key, seq) SELECT v.id, v.key, upd.rev FROM upd JOIN v ON v.id = upd.id WHERE v.key <> ''
	ON CONFLICT (id, key) DO UPDATE SET seq = excluded.seq
)` + batchSelect

// batchUnkeyedSQL is batchSQL for a batch without keys ($15 and $20 unused:
// their arrays are passed empty and only typed here).
const batchUnkeyedSQL = `WITH v AS (
	SELECT * FROM unnest($1::text[], $2::int8[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
		$8::text[], $9::text[], $10::text[], $11::text[], $12::bool[], $13::timestamptz[], $14::timestamptz[],
		$16::bytea[], $17::text[], $18::bool[])
		AS v(id, rev, last_sum, sum, state, summary, status, agent_id, agent_name, parent, labels, archived,
			updated_at, at, line, type, check_at)
)` + batchUpdate + `
		AND cardinality($15::text[]) = 0 AND $20::int8 > 0` + batchTail + batchSelect

const batchUpdate = `, locked AS (
	SELECT ` + customPlans + ` FROM (SELECT count(pg_advisory_xact_lock(hashtextextended(id, 7357))) FROM unnest($1::text[]) AS id) AS l
), upd AS (
	UPDATE ckpt_checkpoints c SET rev = v.rev + 1, last_sum = v.sum, state = v.state::json, summary = v.summary::json,
		status = v.status, agent_id = v.agent_id, agent_name = v.agent_name, parent = v.parent,
		labels = ARRAY(SELECT json_array_elements_text(v.labels::json)), archived = v.archived, updated_at = v.updated_at
	FROM v
	WHERE EXISTS (SELECT FROM locked)
		AND c.id = v.id AND c.rev = v.rev AND c.last_sum = v.last_sum
		AND (NOT v.check_at OR v.at <= clock_timestamp() + make_interval(secs => $19::float8))`

const batchTail = `
	RETURNING c.id, c.rev, c.beat, c.presence
), event AS (
	INSERT INTO ckpt_events (id, seq, line) SELECT v.id, upd.rev, v.line FROM upd JOIN v ON v.id = upd.id
), change AS (
	INSERT INTO ckpt_changes (kind, id, rev, type, at)
	SELECT $21, v.id, upd.rev, v.type, v.at FROM upd JOIN v ON v.id = upd.id ORDER BY v.id
)`

const batchSelect = `
SELECT id, clock_timestamp(), beat, presence FROM upd`

// oneSQL is batchSQL for a batch of one keyed append with scalar
// parameters, numbered as batchSQL's; oneUnkeyedSQL for one without a
// key. They are statements of their own because PostgreSQL plans
// batchSQL anew on every call (a custom plan knows the arrays' lengths,
// so it always looks cheaper than the generic plan), and planning cost
// more than running it; the scalar forms' generic plans are as cheap as
// custom ones, so a connection whose plan_cache_mode forces generic
// plans (genericPlans) plans them once. Labels go as text[] here (arrays
// of arrays do not pass through unnest, so the batch forms take them as
// JSON). oneSetSQL and oneUnkeyedSetSQL are the same statements that also
// set that mode: a connection runs them, unprepared, until one of them
// committed there (see planMode).
const (
	oneSQL           = oneLock + oneKeyed
	oneSetSQL        = oneLock + `, ` + genericPlans + oneKeyed
	oneUnkeyedSQL    = oneLock + oneUnkeyed
	oneUnkeyedSetSQL = oneLock + `, ` + genericPlans + oneUnkeyed
)

const oneKeyed = oneUpdate + `
		AND NOT EXISTS (SELECT 1 FROM ckpt_keys k WHERE k.id = $1::text AND k.key = $15::text AND k.seq > $2::int8 - $20::int8)` +
	oneTail + `, keyed AS (
	INSERT INTO ckpt_keys (id, key, seq) SELECT $1::text, $15::text, upd.rev FROM upd
	ON CONFLICT (id, key) DO UPDATE SET seq = excluded.seq
)` + oneSelect

const oneUnkeyed = oneUpdate + `
		AND $15::text = '' AND $20::int8 > 0` + oneTail + oneSelect

const oneLock = `WITH locked AS (
	SELECT pg_advisory_xact_lock(hashtextextended($1::text, 7357))`

const oneUpdate = `
), upd AS (
	UPDATE ckpt_checkpoints c SET rev = $2::int8 + 1, last_sum = $4::text, state = $5::text::json, summary = $6::text::json,
		status = $7::text, agent_id = $8::text, agent_name = $9::text, parent = $10::text,
		labels = $11::text[], archived = $12::bool, updated_at = $13::timestamptz
	WHERE EXISTS (SELECT FROM locked)
		AND c.id = $1::text AND c.rev = $2::int8 AND c.last_sum = $3::text
		AND (NOT $18::bool OR $14::timestamptz <= clock_timestamp() + make_interval(secs => $19::float8))`

const oneTail = `
	RETURNING c.rev, c.beat, c.presence
), event AS (
	INSERT INTO ckpt_events (id, seq, line) SELECT $1::text, upd.rev, $16::bytea FROM upd
), change AS (
	INSERT INTO ckpt_changes (kind, id, rev, type, at) SELECT $21::text, $1::text, upd.rev, $17::text, $14::timestamptz FROM upd
)`

const oneSelect = `
SELECT $1::text, clock_timestamp(), beat, presence FROM upd`

// genericPlans, run by a connection's one-row fast statements until one
// of them committed there (oneSetSQL, planMode), sets its plan_cache_mode
// to force_generic_plan for the rest of the session, so that the
// statement's prepared form is planned once, its generic plan, instead of
// for its parameters on each of its first five calls as PostgreSQL does
// by default (the statement costs more to plan than to run: a Store of 40
// appends planned it 7 times). Its generic plan is its custom one. The
// other statements on such a connection are key lookups and ranges, whose
// generic plans are their custom ones, except List's, which therefore goes
// by the simple protocol (planned with its values, so its partial indexes
// stay usable). Set in a statement, not at the connection's start: a
// startup parameter would be refused by a PgBouncer in front, and a SET
// would cost a round trip. Not in every statement: a transaction that
// sets a setting makes its commit walk every setting PostgreSQL has
// (AtEOXact_GUC), about 2.5% of the backends' CPU per append with one
// Store per writer. Only a plan's cost depends on the mode, never a
// result: a connection whose mode was reset behind the flag's back (a
// transaction-mode pooler) plans more, and nothing else.
const genericPlans = `set_config('plan_cache_mode', 'force_generic_plan', false)`

// customPlans, run by every batch of several appends, sets the mode back
// to PostgreSQL's default for the next statement on its connection: the
// array form is planned for its rows on every call, as before genericPlans
// (while the table is small its generic plan scans the whole table in
// every batch, and in alternating rounds it saved no server CPU).
const customPlans = `set_config('plan_cache_mode', 'auto', false)`

// oneStatement is the one-row statement for an append with or without a
// key that does or does not set plan_cache_mode.
func oneStatement(keyed, setMode bool) string {
	switch {
	case keyed && setMode:
		return oneSetSQL
	case keyed:
		return oneSQL
	case setMode:
		return oneUnkeyedSetSQL
	}
	return oneUnkeyedSQL
}

// batchArgs returns the statement for rows (sorted by ID) and its
// arguments: a one-row form's scalars for one row, a batch form's arrays
// for more; the unkeyed forms when no row has a key. described: the
// one-row statement runs prepared, so pgx knows $5 and $6 are text and
// takes the row's bytes as they are (unprepared, pgx would send bytes as
// bytea: they go as strings). setMode: the one-row form that also sets
// the connection's plan_cache_mode (genericPlans).
func batchArgs(rows []*fastRow, described, setMode bool) (string, []any) {
	keyed := false
	for _, r := range rows {
		keyed = keyed || r.key != ""
	}
	consts := []any{ckpt.MaxClockSkew.Seconds(), int64(ckpt.KeyWindow), string(ckpt.ChangeEvent)}
	if len(rows) == 1 {
		r := rows[0]
		sql := oneStatement(keyed, setMode)
		var state, summary any = r.row.state, r.row.summary
		if !described {
			state, summary = string(r.row.state), string(r.row.summary)
		}
		return sql, append([]any{r.id, r.rev, r.lastSum, r.event.Sum, state, summary,
			r.row.status, r.row.agentID, r.row.agentName, r.row.parent, r.row.labels, r.row.archived, r.row.updatedAt,
			r.event.At, r.key, r.line, string(r.event.Type), r.checkAt}, consts...)
	}
	n := len(rows)
	var (
		ids, lastSums, sums, states, summaries, statuses   = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		agentIDs, agentNames, parents, labels, keys, types = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		revs                                               = make([]int64, n)
		archived, checks                                   = make([]bool, n), make([]bool, n)
		updatedAts, ats                                    = make([]time.Time, n), make([]time.Time, n)
		lines                                              = make([][]byte, n)
	)
	for i, r := range rows {
		ids[i], revs[i], lastSums[i], sums[i] = r.id, r.rev, r.lastSum, r.event.Sum
		states[i], summaries[i], statuses[i] = string(r.row.state), string(r.row.summary), r.row.status
		agentIDs[i], agentNames[i], parents[i], labels[i] = r.row.agentID, r.row.agentName, r.row.parent, labelsJSON(r.row.labels)
		archived[i], updatedAts[i], ats[i] = r.row.archived, r.row.updatedAt, r.event.At
		keys[i], lines[i], types[i], checks[i] = r.key, r.line, string(r.event.Type), r.checkAt
	}
	sql := batchUnkeyedSQL
	if keyed {
		sql = batchSQL
	} else {
		keys = []string{}
	}
	return sql, append([]any{ids, revs, lastSums, sums, states, summaries, statuses,
		agentIDs, agentNames, parents, labels, archived, updatedAts, ats, keys, lines, types, checks}, consts...)
}
