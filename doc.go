// Package ckpt is the domain of the ckpt checkpoint system: the Checkpoint
// state of one unit of agent work, the Event that changes it, the pure Fold
// that turns a history of events into a state, the chained checksums that make
// a history verifiable, liveness, and the small Store interface every backend
// implements.
//
// The package imports only the standard library. Backends (filestore,
// memstore, …) and integrations import it and never each other.
//
// The invariants a Store must keep are written down in docs/design.md; the
// conformance suite in package storetest checks them for every backend.
package ckpt
