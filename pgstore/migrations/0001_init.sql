-- The first schema of ckpt's PostgreSQL store. docs/design.md explains each
-- table and the invariants the code keeps; never edit an applied migration,
-- add the next one.

-- ckpt_meta holds the store's identity (cursors of its change feed name it).
CREATE TABLE ckpt_meta (
	key   text PRIMARY KEY,
	value text NOT NULL
);
INSERT INTO ckpt_meta (key, value)
VALUES ('store_id', substr(replace(gen_random_uuid()::text, '-', ''), 1, 12));

-- ckpt_checkpoints: one row per checkpoint, the "state row". rev and
-- last_sum are its last event's seq and checksum; state is fold(events)
-- (Heartbeat.LastBeat and Presence excluded); summary is state's
-- ckpt.Summary and the columns after it are copies of its fields that
-- listing filters and indexes use. beat and presence are liveness, set by
-- Beat without a synchronous commit.
CREATE TABLE ckpt_checkpoints (
	id         text COLLATE "C" PRIMARY KEY,
	rev        bigint NOT NULL CHECK (rev > 0),
	last_sum   text NOT NULL,
	state      json NOT NULL,
	summary    json NOT NULL,
	status     text NOT NULL,
	agent_id   text NOT NULL,
	agent_name text NOT NULL,
	parent     text NOT NULL,
	labels     text[] NOT NULL,
	archived   boolean NOT NULL,
	updated_at timestamptz NOT NULL,
	beat       timestamptz,
	presence   json
) WITH (fillfactor = 70);
CREATE INDEX ckpt_checkpoints_status ON ckpt_checkpoints (status, id);
CREATE INDEX ckpt_checkpoints_parent ON ckpt_checkpoints (parent, id) WHERE parent <> '';
CREATE INDEX ckpt_checkpoints_agent_id ON ckpt_checkpoints (agent_id) WHERE agent_id <> '';
CREATE INDEX ckpt_checkpoints_agent_name ON ckpt_checkpoints (agent_name) WHERE agent_name <> '';
CREATE INDEX ckpt_checkpoints_labels ON ckpt_checkpoints USING gin (labels);
-- No index on updated_at or beat, on purpose: an append or a beat that
-- changes no indexed column is a HOT update (no index entries written),
-- which the free space fillfactor leaves on each page makes likely. Time
-- filters are checked on the ID-ordered scan a page already makes.

-- ckpt_events: the history, append-only. line is the event's exact
-- chained history line (ckpt.EncodeLine, without its newline): the same
-- bytes a .ckpt/ history.jsonl holds, so an export verifies the same chain.
CREATE TABLE ckpt_events (
	id   text COLLATE "C" NOT NULL,
	seq  bigint NOT NULL CHECK (seq > 0),
	line bytea NOT NULL,
	PRIMARY KEY (id, seq)
);

-- ckpt_keys: the latest event of each idempotency key of each checkpoint.
-- Its primary key is the unique index Append probes; a key whose event has
-- fallen out of the last ckpt.KeyWindow events is reused by a new event.
CREATE TABLE ckpt_keys (
	id  text COLLATE "C" NOT NULL,
	key text NOT NULL,
	seq bigint NOT NULL,
	PRIMARY KEY (id, key)
);

-- ckpt_changes: the change feed. xid is the writing transaction's ID; the
-- feed is ordered by (xid, pos) and read only below the oldest transaction
-- still in flight, so a commit landing out of order is never skipped.
CREATE TABLE ckpt_changes (
	pos  bigint GENERATED ALWAYS AS IDENTITY,
	xid  xid8 NOT NULL DEFAULT pg_current_xact_id(),
	kind text NOT NULL,
	id   text COLLATE "C" NOT NULL,
	rev  bigint NOT NULL,
	type text NOT NULL,
	at   timestamptz NOT NULL,
	PRIMARY KEY (xid, pos)
);
