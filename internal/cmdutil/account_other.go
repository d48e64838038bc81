//go:build !unix

package cmdutil

import (
	"errors"
	"os"
)

// passwdFile: there is no /etc/passwd; os/user finds the account.
func passwdFile() (*os.File, error) { return nil, errors.ErrUnsupported }

func getuid() int { return os.Getuid() }
