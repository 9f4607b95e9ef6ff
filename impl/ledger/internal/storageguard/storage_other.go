//go:build !linux && !darwin && !windows

package storageguard

import (
	"os"
)

// On other platforms the storage boundary cannot be verified, so every
// open is refused.
const (
	PosixModes      = true
	CanCreateDirs   = false
	permissionModel = "unsupported"
)

var errUnsupported = invalidInput("platform is not supported")

func platformPreflight(Options) error          { return errUnsupported }
func Lstat(string) (FileInfo, error)           { return FileInfo{}, errUnsupported }
func fstat(*os.File) (FileInfo, error)         { return FileInfo{}, errUnsupported }
func OpenNoFollow(string) (*os.File, error)    { return nil, errUnsupported }
func CreatePrivate(string) (*os.File, error)   { return nil, errUnsupported }
func checkAncestors(string, bool) error        { return errUnsupported }
func makePrivateDir(string) error              { return errUnsupported }
func checkFinalDir(string, string, bool) error { return errUnsupported }

func SyncEntryDir(string) error { return errUnsupported }
