package ledger

// The file systems of TestNetworkFileSystemRefused, as Linux's statfs
// names them by magic number.
var (
	networkFileSystems = map[string]fsStat{
		"nfs": {magic: 0x6969}, "smb": {magic: 0x517b}, "cifs": {magic: 0xff534d42},
		"smb2": {magic: 0xfe534d42}, "9p": {magic: 0x01021997}, "afs": {magic: 0x5346414f},
		"kafs": {magic: 0x6b414653}, "ceph": {magic: 0x00c36400}, "lustre": {magic: 0x0bd00bd0},
		"gfs2": {magic: 0x01161970}, "ocfs2": {magic: 0x7461636f},
	}
	localFileSystems = map[string]fsStat{
		"ext4": {magic: 0xef53}, "xfs": {magic: 0x58465342}, "btrfs": {magic: 0x9123683e},
		"tmpfs": {magic: 0x01021994}, "fuse": {magic: 0x65735546}, "zfs": {magic: 0x2fc12fc1},
	}
)
