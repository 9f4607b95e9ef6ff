//go:build linux

package crashfs

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// ErrUnavailable wraps every reason FUSE cannot be mounted here (no
// /dev/fuse, not allowed to mount).
var ErrUnavailable = errors.New("crashfs: FUSE is not available")

// fsNamePrefix names this package's mounts in /proc/self/mountinfo; the
// mounting process's id follows, so that a stale mount is told apart from
// a live one of another test process.
const fsNamePrefix = "crashfs."

// Mount is a mounted FS.
type Mount struct {
	Dir    string
	FS     *FS
	server *fuse.Server
	conn   uint32 // the connection's number (the mount's minor device)
}

// Mount mounts f at dir, an existing empty directory, with mount(2)
// itself (DirectMountStrict: these machines run as root with /dev/fuse and
// no fusermount). Mounts of earlier test processes that died are detached
// first. The /dev/fuse descriptor is made close-on-exec, so that the
// processes a test starts do not hold the connection (go-fuse opens it
// without the flag); start them with Pdeathsig as well.
func (f *FS) Mount(dir string) (*Mount, error) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	DetachStale()
	zero := time.Duration(0)
	opts := &gofs.Options{
		MountOptions: fuse.MountOptions{
			DirectMountStrict: true,
			FsName:            fsNamePrefix + strconv.Itoa(os.Getpid()),
			Name:              "crashfs",
			DisableXAttrs:     true,
		},
		// Every lookup and stat comes to the file system: the tree is the
		// truth, and a test reads the state between calls.
		EntryTimeout:    &zero,
		AttrTimeout:     &zero,
		NegativeTimeout: &zero,
		RootStableAttr:  &gofs.StableAttr{Ino: 1},
	}
	// No process may be forked while the descriptor lacks close-on-exec.
	syscall.ForkLock.Lock()
	server, err := gofs.Mount(dir, &node{f: f, o: f.root}, opts)
	closeOnExecFuse()
	syscall.ForkLock.Unlock()
	if err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENODEV) || errors.Is(err, syscall.EACCES) {
			return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		return nil, err
	}
	mnt := &Mount{Dir: dir, FS: f, server: server}
	var st syscall.Stat_t
	if syscall.Stat(dir, &st) == nil {
		mnt.conn = unix.Minor(st.Dev)
	}
	return mnt, nil
}

// Unmount unmounts, detaching the mount lazily if it is still busy.
func (m *Mount) Unmount() error {
	if m.server == nil {
		return nil
	}
	err := m.server.Unmount()
	if err != nil {
		// Still busy: detach it, and abort the connection where the
		// fuse control file system is mounted, so that no process stays
		// stuck in a request.
		derr := syscall.Unmount(m.Dir, syscall.MNT_DETACH)
		os.WriteFile(fmt.Sprintf("/sys/fs/fuse/connections/%d/abort", m.conn), []byte("1"), 0)
		if derr != nil {
			return fmt.Errorf("unmount %s: %v; detach: %v", m.Dir, err, derr)
		}
	}
	m.server = nil
	return nil
}

// closeOnExecFuse sets close-on-exec on every descriptor of this process
// open on /dev/fuse.
func closeOnExecFuse() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == "/dev/fuse" {
			syscall.CloseOnExec(fd)
		}
	}
}

// DetachStale lazily detaches every crashfs mount whose mounting process
// is gone (a test killed before it could unmount), and reports how many.
func DetachStale() int {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "id parent major:minor root mountpoint opts [optional...] - fstype source superopts"
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, fl := range fields {
			if fl == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+2 >= len(fields) || len(fields) < 5 {
			continue
		}
		fstype, source := fields[sep+1], fields[sep+2]
		if fstype != "fuse.crashfs" || !strings.HasPrefix(source, fsNamePrefix) {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimPrefix(source, fsNamePrefix))
		if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		if syscall.Unmount(unescapeMountinfo(fields[4]), syscall.MNT_DETACH) == nil {
			n++
		}
	}
	return n
}

// unescapeMountinfo decodes the octal escapes (\040 for a space) of a
// mountinfo path.
func unescapeMountinfo(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
