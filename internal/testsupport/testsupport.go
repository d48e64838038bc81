// Package testsupport holds the helpers several packages' tests share, so
// that each is written once: git run in a throwaway repository (Git), the
// contract of a hook's output (FailForward), the stale report of one
// listing (JudgeAll) and a tool the test needs (NeedCommand: skipped where
// missing, failed in CI). Only tests import it.
package testsupport
