//go:build !linux && !darwin && !windows

package ledger

import (
	"os"
)

// On other platforms the storage boundary cannot be verified, so every
// open is refused.
const (
	posixModes      = true
	canCreateDirs   = false
	permissionModel = "unsupported"
)

var errUnsupported = invalidInput("platform is not supported")

func platformPreflight(Options) error          { return errUnsupported }
func lstat(string) (fileInfo, error)           { return fileInfo{}, errUnsupported }
func fstat(*os.File) (fileInfo, error)         { return fileInfo{}, errUnsupported }
func openNoFollow(string) (*os.File, error)    { return nil, errUnsupported }
func createPrivate(string) (*os.File, error)   { return nil, errUnsupported }
func checkAncestors(string, bool) error        { return errUnsupported }
func makePrivateDir(string) error              { return errUnsupported }
func checkFinalDir(string, string, bool) error { return errUnsupported }

func syncEntryDir(string) error { return errUnsupported }
