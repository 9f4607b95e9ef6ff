package ledger

import "github.com/stateguard/stateguard/impl/ledger/internal/storageguard"

// The file systems of TestNetworkFileSystemRefused, as Linux's statfs
// names them by Magic number.
var (
	networkFileSystems = map[string]storageguard.FSStat{
		"nfs": {Magic: 0x6969}, "smb": {Magic: 0x517b}, "cifs": {Magic: 0xff534d42},
		"smb2": {Magic: 0xfe534d42}, "9p": {Magic: 0x01021997}, "afs": {Magic: 0x5346414f},
		"kafs": {Magic: 0x6b414653}, "ceph": {Magic: 0x00c36400}, "lustre": {Magic: 0x0bd00bd0},
		"gfs2": {Magic: 0x01161970}, "ocfs2": {Magic: 0x7461636f},
	}
	localFileSystems = map[string]storageguard.FSStat{
		"ext4": {Magic: 0xef53}, "xfs": {Magic: 0x58465342}, "btrfs": {Magic: 0x9123683e},
		"tmpfs": {Magic: 0x01021994}, "fuse": {Magic: 0x65735546}, "zfs": {Magic: 0x2fc12fc1},
	}
)
