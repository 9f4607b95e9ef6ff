package storageguard

import "syscall"

// statDirFS reads the type name of dir's file system.
func statDirFS(dir string) (FSStat, error) {
	var st syscall.Statfs_t
	for {
		err := syscall.Statfs(dir, &st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return FSStat{}, err
		}
		name := make([]byte, 0, len(st.Fstypename))
		for _, c := range st.Fstypename {
			if c == 0 {
				break
			}
			name = append(name, byte(c))
		}
		return FSStat{TypeName: string(name)}, nil
	}
}

// networkTypeNames are the macOS type names of network file systems a
// ledger refuses. macFUSE ("macfuse", "osxfuse") is allowed, as FUSE is
// on Linux: it carries local file systems as well as remote ones.
var networkTypeNames = map[string]bool{
	"nfs": true, "smbfs": true, "afpfs": true, "webdav": true, "cifs": true, "ftp": true,
}

func onNetworkFS(st FSStat) bool { return networkTypeNames[st.TypeName] }
