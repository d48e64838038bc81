//go:build !linux

package process

import "errors"

// Without /proc neither the ancestry nor a start time can be read; a
// recorded process is never confirmed alive or dead, and presence falls
// back to the clock.
func readStat(int) (stat, error) { return stat{}, errors.ErrUnsupported }

func aliveHere(int, string) (alive, known bool) { return false, false }
