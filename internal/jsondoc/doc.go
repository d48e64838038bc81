// Package jsondoc is the module's one implementation of ordered JSON: the
// JSON-document toolkit the seed adapters (protocols/superpowers, ccc,
// agentcheckpoints and sitebuilder) share, and the reader and writer of the
// agent clients' settings files that package claude edits. It is internal
// to the module, so integrations share it without importing each other.
//
// Seed checkpoint files are read by people and kept in git, and the tools
// that write them keep fields ckpt does not model, so an adapter must write
// back what it read. The package gives:
//
//   - Object, a JSON object that keeps its keys in order and its values as
//     the bytes read (ParseObject, AsObject, NewObject, Encode), ParseValue
//     for any JSON value, and Indent, the layout of a written file; errors
//     say where the JSON broke by line and column;
//   - Equal, which compares JSON values by meaning, and Merge, the three-way
//     merge that lets an export keep every field and spelling of the file it
//     was imported from while writing what the checkpoint changed;
//   - Fields, lenient readers of an object's members that convert what is
//     unambiguous and say so in Notes, the warnings of an import;
//   - ParseTime and FormatTime, StatusFromWord and ReadStatus (seed status
//     words), StepIDs, NonEmpty and UniqueNonEmpty (lists as read), and the
//     record of the imported file an adapter keeps in Checkpoint.Meta
//     (MetaSource, ReadMeta, WriteMeta), with ImportedState, the state an
//     export's merge starts from.
//
// Progress is not computed here: adapters call ckpt.Derive, the fold's own
// arithmetic, on the states they build.
//
// Nothing in the package keeps global state; an Object is not safe for
// concurrent use while one goroutine changes it.
package jsondoc
