package ckpt

// Checkpoint.Clone is generated (clone_gen.go) by internal/clonegen from
// the type: plain code copies faster than a walk by reflection, and every
// append, Get and fold pays for a copy. After changing Checkpoint or a
// type it holds, run `go generate .` here; TestCloneCodeIsCurrent fails
// until the file is current.

//go:generate go test -run ^TestCloneCodeIsCurrent$ -update-clone .
