// Package claude connects ckpt to the hooks of coding-agent clients: Claude
// Code, and where their hook schemas allow, OpenAI Codex and Gemini CLI.
//
// It has four parts:
//
//   - Input and ParseInput read the JSON a client writes on a hook's stdin,
//     leniently: every field may be missing, unknown fields are ignored and
//     older or other clients' field names are accepted.
//   - The output builders (SessionStartOutput, BlockStop, …) write only the
//     fields the client documents for each event, always under
//     MaxOutputChars.
//   - Install, Uninstall and Print merge ckpt's hook entries into a client's
//     settings file, idempotently and without touching anything ckpt does
//     not own.
//   - Handler does what each hook event means for a checkpoint (see
//     docs/hooks.md), fail-forward: a ckpt problem becomes a warning, never a
//     broken agent session.
//
// SessionKey maps a hook payload to the checkpoint ID it belongs to.
package claude
