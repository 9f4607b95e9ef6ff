package ledger

// The file systems of TestNetworkFileSystemRefused, as macOS's statfs
// names them.
var (
	networkFileSystems = map[string]fsStat{
		"nfs": {typeName: "nfs"}, "smbfs": {typeName: "smbfs"}, "afpfs": {typeName: "afpfs"},
		"webdav": {typeName: "webdav"}, "cifs": {typeName: "cifs"},
	}
	localFileSystems = map[string]fsStat{
		"apfs": {typeName: "apfs"}, "hfs": {typeName: "hfs"}, "macfuse": {typeName: "macfuse"},
	}
)
