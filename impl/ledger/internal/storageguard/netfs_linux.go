package storageguard

import "syscall"

// statDirFS reads the magic number of dir's file system.
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
		// Magic numbers are 32 bits; Type is signed and 32 bits wide on
		// some architectures, where the high ones read as negative.
		return FSStat{Magic: uint32(st.Type)}, nil
	}
}

// networkMagics are the statfs Magic numbers of the network and cluster
// file systems a ledger refuses (linux/Magic.h and the file systems' own
// headers). FUSE (0x65735546) is not among them: it carries local file
// systems as well as remote ones (an encrypted home directory, the crash
// file system of this project's tests, sshfs) and statfs cannot tell
// them apart, so a FUSE directory is taken as the local one it mostly is.
var networkMagics = map[uint32]string{
	0x6969:     "nfs",
	0x517b:     "smb",
	0xff534d42: "cifs",
	0xfe534d42: "smb2",
	0x01021997: "9p",
	0x5346414f: "afs",
	0x6b414653: "kafs",
	0x00c36400: "ceph",
	0x0bd00bd0: "lustre",
	0x01161970: "gfs2",
	0x7461636f: "ocfs2",
}

func onNetworkFS(st FSStat) bool {
	_, ok := networkMagics[st.Magic]
	return ok
}
