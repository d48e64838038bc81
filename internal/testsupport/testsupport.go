// Package testsupport holds the helpers several packages' tests share, so
// that each is written once: git run in a throwaway repository (Git), the
// contract of a hook's output (FailForward) and the stale report of one
// listing (JudgeAll). Only tests import it.
package testsupport
