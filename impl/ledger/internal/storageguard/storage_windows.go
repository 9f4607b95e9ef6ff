//go:build windows

package storageguard

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// PosixModes: Windows privacy is an externally managed DACL; no mode bits.
const PosixModes = false

// CanCreateDirs: on Windows the parent directory must already exist.
const CanCreateDirs = false

// permissionModel is what StorageInfo reports on this platform.
const permissionModel = "external_acl"

// platformPreflight requires the caller's external-ACL acknowledgement,
// which certifies nothing: the DACL cannot be inspected here.
func platformPreflight(opts Options) error {
	if !opts.AllowExternalACL {
		return invalidInput("external ACL acknowledgement is required on Windows")
	}
	return nil
}

// handleInfo reads identity, link count and reparse attributes through a
// handle opened on the path itself (a reparse point is not followed).
func handleInfo(path string) (FileInfo, error) {
	p, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return FileInfo{}, &fs.PathError{Op: "Lstat", Path: path, Err: syscall.EINVAL}
	}
	h, err := syscall.CreateFile(p, 0,
		syscall.FILE_SHARE_READ|syscall.FILE_SHARE_WRITE|syscall.FILE_SHARE_DELETE,
		nil, syscall.OPEN_EXISTING,
		syscall.FILE_FLAG_BACKUP_SEMANTICS|syscall.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		if err == syscall.ERROR_FILE_NOT_FOUND || err == syscall.ERROR_PATH_NOT_FOUND {
			return FileInfo{}, &fs.PathError{Op: "Lstat", Path: path, Err: fs.ErrNotExist}
		}
		return FileInfo{}, &fs.PathError{Op: "Lstat", Path: path, Err: err}
	}
	defer syscall.CloseHandle(h)
	var d syscall.ByHandleFileInformation
	if err := syscall.GetFileInformationByHandle(h, &d); err != nil {
		return FileInfo{}, err
	}
	return infoFromHandle(&d), nil
}

func infoFromHandle(d *syscall.ByHandleFileInformation) FileInfo {
	attr := d.FileAttributes
	isLink := attr&syscall.FILE_ATTRIBUTE_REPARSE_POINT != 0
	isDir := attr&syscall.FILE_ATTRIBUTE_DIRECTORY != 0
	return FileInfo{
		ident:   fileIdent{dev: uint64(d.VolumeSerialNumber), ino: uint64(d.FileIndexHigh)<<32 | uint64(d.FileIndexLow)},
		nlink:   uint64(d.NumberOfLinks),
		perm:    0o600,
		uid:     -1,
		isLink:  isLink,
		isDir:   isDir && !isLink,
		isReg:   !isDir && !isLink,
		size:    int64(d.FileSizeHigh)<<32 | int64(d.FileSizeLow),
		modTime: d.LastWriteTime.Nanoseconds(),
	}
}

// Lstat reads path's metadata without following a reparse point.
func Lstat(path string) (FileInfo, error) { return handleInfo(path) }

// fstat reads an open file's metadata.
func fstat(f *os.File) (FileInfo, error) {
	var d syscall.ByHandleFileInformation
	if err := syscall.GetFileInformationByHandle(syscall.Handle(f.Fd()), &d); err != nil {
		return FileInfo{}, err
	}
	return infoFromHandle(&d), nil
}

// OpenNoFollow opens an existing database file read-only; the caller has
// already refused reparse points and compares identities after opening.
// An open that another handle's sharing refuses is errInUse: SQLite
// deleting a sidecar (DeleteFile holds it with delete access for that
// moment, which this open, like Go's, does not share) refuses it so.
func OpenNoFollow(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	switch {
	case err == nil:
		return f, nil
	case errors.Is(err, windows.ERROR_SHARING_VIOLATION):
		return nil, &fs.PathError{Op: "open", Path: path, Err: errInUse}
	}
	return nil, err
}

// CreatePrivate creates a new database file exclusively. A file that
// exists by now is errFileAppeared: another opener made it first.
func CreatePrivate(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, ErrFileAppeared
		}
		return nil, internal("create database", err)
	}
	return f, nil
}

// checkAncestors refuses a resolved parent chain whose final directory is a
// reparse point or not a directory; modes are the external DACL's business.
func checkAncestors(dir string, _ bool) error { return checkFinalDir(dir, dir, false) }

// makePrivateDir is never reached on Windows (CanCreateDirs is false).
func makePrivateDir(string) error {
	return invalidInput("database directory does not exist")
}

// checkFinalDir requires the parent to be an existing real directory; the
// directory's ACL, not an owner, decides who may use it.
func checkFinalDir(dir, _ string, _ bool) error {
	info, err := Lstat(dir)
	if err != nil {
		return invalidInput("database directory cannot be inspected")
	}
	if info.isLink || !info.isDir {
		return invalidInput("database directory is not a directory")
	}
	return nil
}

// SyncEntryDir does nothing on Windows, where a program cannot open a
// directory to sync it; the file's own sync is what the platform offers.
func SyncEntryDir(string) error { return nil }
