package ledger

import "github.com/stateguard/stateguard/impl/ledger/internal/storageguard"

// The file systems of TestNetworkFileSystemRefused, as macOS's statfs
// names them.
var (
	networkFileSystems = map[string]storageguard.FSStat{
		"nfs": {TypeName: "nfs"}, "smbfs": {TypeName: "smbfs"}, "afpfs": {TypeName: "afpfs"},
		"webdav": {TypeName: "webdav"}, "cifs": {TypeName: "cifs"},
	}
	localFileSystems = map[string]storageguard.FSStat{
		"apfs": {TypeName: "apfs"}, "hfs": {TypeName: "hfs"}, "macfuse": {TypeName: "macfuse"},
	}
)
