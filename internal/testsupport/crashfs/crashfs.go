//go:build linux

package crashfs

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// obj is one file or directory, with its current and its durable state.
type obj struct {
	ino  uint64
	dir  bool
	mode uint32 // permission bits
	// A file's bytes now, and as of its last successful sync.
	data, durable []byte
	// pending are the changes to data since the last sync, in order: what a
	// torn cut may keep a part of.
	pending []change
	// A directory's entries now, and as of its last successful sync.
	entries, durableEntries map[string]*obj
	nlink                   int
	parent                  *obj // where it was last linked (for names in the log)
	name                    string
	tick                    uint64 // modification time, in operations
}

// change is one write (data at off) or truncation (to size) of a file.
type change struct {
	off   int64
	data  []byte
	trunc bool
}

// Fault makes the Nth operation of one kind fail (counted from SetFault),
// and with Sticky every later one of that kind too, until cleared. A
// failed write changes nothing; a failed fsync makes nothing durable.
type Fault struct {
	Op     string // "write", "fsync" (files and directories) or "read"
	Nth    int
	Errno  syscall.Errno
	Sticky bool
	// Under, when set, limits the fault to names starting with this
	// path, relative to the root (e.g. "x/y/tasks.sqlite").
	Under string
	seen  int
	fired int
}

// FS is the file system's state: one tree of objects, an operation count,
// an armed cut and an armed fault. Every method is safe for concurrent use
// with the kernel's requests.
type FS struct {
	mu      sync.Mutex
	root    *obj
	nextIno uint64
	tick    uint64
	ops     int // state-changing operations so far
	cutAt   int // the operation count that takes the cut; 0: none armed
	cut     *Node
	cutTorn *tornSource
	log     []string // the state-changing operations since ArmCut/ResetLog
	fault   *Fault
}

// New returns an empty file system whose root is a private directory.
func New() *FS {
	f := &FS{nextIno: 2}
	f.root = &obj{ino: 1, dir: true, mode: 0o700, entries: map[string]*obj{}, durableEntries: map[string]*obj{}, nlink: 1}
	return f
}

func (f *FS) newObj(dir bool, mode uint32) *obj {
	o := &obj{ino: f.nextIno, dir: dir, mode: mode & 0o7777, tick: f.tick}
	f.nextIno++
	if dir {
		o.entries, o.durableEntries = map[string]*obj{}, map[string]*obj{}
	}
	return o
}

// path names o relative to the root, as it was last linked.
func (o *obj) path() string {
	var parts []string
	for p := o; p != nil && p.parent != nil; p = p.parent {
		parts = append(parts, p.name)
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, "/")
}

// changed counts one state-changing operation (f.mu held) and takes the
// armed cut when its count is reached.
func (f *FS) changed(what string, o *obj) {
	f.ops++
	f.tick++
	o.tick = f.tick
	f.log = append(f.log, what+" "+o.path())
	if f.cutAt != 0 && f.ops == f.cutAt {
		f.cut = f.durableTree()
		f.cutTorn = f.tornSource()
	}
}

// failing reports the fault's errno when this operation is the one (or,
// sticky, one after it) that must fail (f.mu held).
func (f *FS) failing(op string, o *obj) syscall.Errno {
	ft := f.fault
	if ft == nil || ft.Op != op || (ft.Under != "" && !strings.HasPrefix(o.path(), ft.Under)) {
		return 0
	}
	ft.seen++
	if ft.seen == ft.Nth || (ft.Sticky && ft.seen > ft.Nth) {
		ft.fired++
		return ft.Errno
	}
	return 0
}

// Ops is the number of state-changing operations (writes, truncations,
// mode changes, syncs, creates, mkdirs, renames, unlinks) so far.
func (f *FS) Ops() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ops
}

// SyncAll makes the whole current tree durable, as a test's setup does
// before the call it cuts.
func (f *FS) SyncAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := map[*obj]bool{}
	var walk func(o *obj)
	walk = func(o *obj) {
		if seen[o] {
			return
		}
		seen[o] = true
		if !o.dir {
			o.durable = append([]byte(nil), o.data...)
			o.pending = nil
			return
		}
		o.durableEntries = make(map[string]*obj, len(o.entries))
		for name, c := range o.entries {
			o.durableEntries[name] = c
			walk(c)
		}
	}
	walk(f.root)
}

// ArmCut arms a cut right after the k-th state-changing operation from
// now (k >= 1) and clears the log and any earlier cut.
func (f *FS) ArmCut(k int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cutAt = f.ops + k
	f.cut, f.cutTorn, f.log = nil, nil, nil
}

// Disarm drops an armed cut that has not fired.
func (f *FS) Disarm() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cutAt = 0
}

// Cut is the durable tree kept at the armed cut, or nil if it did not
// come (the call made fewer operations).
func (f *FS) Cut() *Node {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cut
}

// Log is the state-changing operations since the last ArmCut or
// ResetLog, one "op path" line each.
func (f *FS) Log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

// ResetLog clears the log.
func (f *FS) ResetLog() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = nil
}

// Durable is the durable tree now: what a cut now would keep.
func (f *FS) Durable() *Node {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.durableTree()
}

// Current is the tree as it reads now.
func (f *FS) Current() *Node {
	f.mu.Lock()
	defer f.mu.Unlock()
	return snapshot(f.root, func(o *obj) []byte { return o.data }, func(o *obj) map[string]*obj { return o.entries })
}

// SetFault arms a fault (nil clears it) and returns the previous one, so
// that a test can read how often it fired.
func (f *FS) SetFault(ft *Fault) *Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	prev := f.fault
	f.fault = ft
	return prev
}

// Fired is how often the fault has made an operation fail.
func (ft *Fault) Fired() int { return ft.fired }

func (f *FS) durableTree() *Node {
	return snapshot(f.root, func(o *obj) []byte { return o.durable }, func(o *obj) map[string]*obj { return o.durableEntries })
}

// snapshot copies the tree reachable from o through entries, with each
// file's bytes as data gives them. A directory reached twice (entries
// kept from different moments can form a cycle) is cut off the second
// time.
func snapshot(root *obj, data func(*obj) []byte, entries func(*obj) map[string]*obj) *Node {
	seen := map[*obj]bool{}
	var walk func(o *obj) *Node
	walk = func(o *obj) *Node {
		n := &Node{Dir: o.dir, Mode: fs.FileMode(o.mode)}
		if !o.dir {
			n.Data = append([]byte(nil), data(o)...)
			return n
		}
		n.Entries = map[string]*Node{}
		if seen[o] {
			return n
		}
		seen[o] = true
		for name, c := range entries(o) {
			n.Entries[name] = walk(c)
		}
		return n
	}
	return walk(root)
}

// Node is one file or directory of a tree taken out of the file system.
type Node struct {
	Dir     bool
	Mode    fs.FileMode // permission bits
	Data    []byte
	Entries map[string]*Node
}

// Lookup follows a slash-separated path from n; nil if it is not there.
func (n *Node) Lookup(p string) *Node {
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." {
			continue
		}
		if n == nil || !n.Dir {
			return nil
		}
		n = n.Entries[part]
	}
	return n
}

// Names lists the tree's paths below n in order, directories with a
// trailing slash: a compact picture for a failure message.
func (n *Node) Names() []string {
	var out []string
	var walk func(prefix string, n *Node)
	walk = func(prefix string, n *Node) {
		names := make([]string, 0, len(n.Entries))
		for name := range n.Entries {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			c := n.Entries[name]
			if c.Dir {
				out = append(out, prefix+name+"/")
				walk(prefix+name+"/", c)
			} else {
				out = append(out, fmt.Sprintf("%s%s (%d bytes)", prefix, name, len(c.Data)))
			}
		}
	}
	if n != nil && n.Dir {
		walk("", n)
	}
	return out
}

// WriteOut writes the entries of directory n into dir, which must exist,
// with their modes: the state a machine would find after the cut.
func (n *Node) WriteOut(dir string) error {
	for name, c := range n.Entries {
		p := filepath.Join(dir, name)
		if c.Dir {
			if err := os.Mkdir(p, 0o700); err != nil {
				return err
			}
			if err := c.WriteOut(p); err != nil {
				return err
			}
		} else if err := os.WriteFile(p, c.Data, 0o600); err != nil {
			return err
		}
		if err := os.Chmod(p, c.Mode.Perm()); err != nil {
			return err
		}
	}
	return nil
}

// node is the FUSE face of one obj.
type node struct {
	gofs.Inode
	f *FS
	o *obj
}

var (
	_ gofs.NodeLookuper  = (*node)(nil)
	_ gofs.NodeGetattrer = (*node)(nil)
	_ gofs.NodeSetattrer = (*node)(nil)
	_ gofs.NodeOpener    = (*node)(nil)
	_ gofs.NodeReader    = (*node)(nil)
	_ gofs.NodeWriter    = (*node)(nil)
	_ gofs.NodeFsyncer   = (*node)(nil)
	_ gofs.NodeFlusher   = (*node)(nil)
	_ gofs.NodeAllocater = (*node)(nil)
	_ gofs.NodeReaddirer = (*node)(nil)
	_ gofs.NodeMkdirer   = (*node)(nil)
	_ gofs.NodeCreater   = (*node)(nil)
	_ gofs.NodeUnlinker  = (*node)(nil)
	_ gofs.NodeRmdirer   = (*node)(nil)
	_ gofs.NodeRenamer   = (*node)(nil)
	_ gofs.NodeStatfser  = (*node)(nil)
)

func (n *node) fill(o *obj, a *fuse.Attr) {
	a.Ino = o.ino
	a.Mode = o.mode | syscall.S_IFREG
	a.Size = uint64(len(o.data))
	a.Nlink = uint32(o.nlink)
	if o.dir {
		a.Mode = o.mode | syscall.S_IFDIR
		a.Size = 4096
		a.Nlink = 2
	}
	a.Blocks = (a.Size + 511) / 512
	a.Blksize = 4096
	a.Owner = fuse.Owner{Uid: uint32(os.Geteuid()), Gid: uint32(os.Getegid())}
	// Times advance with every change, so that a reader that compares
	// them sees each write; a fixed base keeps them deterministic.
	const base = 1_700_000_000
	sec, nsec := base+o.tick/1_000_000, uint32(o.tick%1_000_000)*1000
	a.Mtime, a.Mtimensec = sec, nsec
	a.Ctime, a.Ctimensec = sec, nsec
	a.Atime, a.Atimensec = sec, nsec
}

func (n *node) child(ctx context.Context, c *obj) *gofs.Inode {
	mode := uint32(syscall.S_IFREG)
	if c.dir {
		mode = syscall.S_IFDIR
	}
	return n.NewInode(ctx, &node{f: n.f, o: c}, gofs.StableAttr{Mode: mode, Ino: c.ino})
}

func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	n.f.mu.Lock()
	defer n.f.mu.Unlock()
	c := n.o.entries[name]
	if c == nil {
		return nil, syscall.ENOENT
	}
	n.fill(c, &out.Attr)
	return n.child(ctx, c), 0
}

func (n *node) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	n.f.mu.Lock()
	defer n.f.mu.Unlock()
	n.fill(n.o, &out.Attr)
	return 0
}

func (n *node) Setattr(ctx context.Context, fh gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	f := n.f
	f.mu.Lock()
	defer f.mu.Unlock()
	o := n.o
	if m, ok := in.GetMode(); ok {
		o.mode = m & 0o7777
		f.changed("chmod", o)
	}
	if sz, ok := in.GetSize(); ok && !o.dir {
		if e := f.failing("write", o); e != 0 {
			return e
		}
		o.truncate(int64(sz))
		o.pending = append(o.pending, change{off: int64(sz), trunc: true})
		f.changed("truncate", o)
	}
	n.fill(o, &out.Attr)
	return 0
}

func (o *obj) truncate(sz int64) {
	if sz <= int64(len(o.data)) {
		o.data = o.data[:sz:sz]
		return
	}
	o.data = append(o.data, make([]byte, sz-int64(len(o.data)))...)
}

func (o *obj) writeAt(p []byte, off int64) {
	if end := off + int64(len(p)); end > int64(len(o.data)) {
		o.truncate(end)
	}
	copy(o.data[off:], p)
}

func (n *node) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	// The kernel's page cache stays valid: every change comes through it.
	return nil, fuse.FOPEN_KEEP_CACHE, 0
}

func (n *node) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	f := n.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if e := f.failing("read", n.o); e != 0 {
		return nil, e
	}
	d := n.o.data
	if off >= int64(len(d)) {
		return fuse.ReadResultData(nil), 0
	}
	end := min(off+int64(len(dest)), int64(len(d)))
	return fuse.ReadResultData(append([]byte(nil), d[off:end]...)), 0
}

func (n *node) Write(ctx context.Context, fh gofs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	f := n.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if e := f.failing("write", n.o); e != 0 {
		return 0, e
	}
	n.o.writeAt(data, off)
	n.o.pending = append(n.o.pending, change{off: off, data: append([]byte(nil), data...)})
	f.changed("write", n.o)
	return uint32(len(data)), 0
}

// Fsync makes a file's changes since its last sync, or a directory's
// entries, durable. The kernel has written the dirty pages before it asks.
// A failed fsync of a file drops the changes it covered for good, as
// Linux may after a write-back error (the pages are marked clean and stay
// readable until evicted, but are never written): a later fsync makes
// only the changes after the failure durable.
func (n *node) Fsync(ctx context.Context, fh gofs.FileHandle, flags uint32) syscall.Errno {
	f := n.f
	f.mu.Lock()
	defer f.mu.Unlock()
	o := n.o
	if e := f.failing("fsync", o); e != 0 {
		if !o.dir {
			o.pending = nil
		}
		return e
	}
	if o.dir {
		o.durableEntries = make(map[string]*obj, len(o.entries))
		for name, c := range o.entries {
			o.durableEntries[name] = c
		}
		f.changed("fsync-dir", o)
		return 0
	}
	for _, c := range o.pending {
		o.durable = apply(o.durable, c)
	}
	o.pending = nil
	f.changed("fsync", o)
	return 0
}

// Flush comes at every close; it is not a sync.
func (n *node) Flush(ctx context.Context, fh gofs.FileHandle) syscall.Errno { return 0 }

func (n *node) Allocate(ctx context.Context, fh gofs.FileHandle, off, size uint64, mode uint32) syscall.Errno {
	f := n.f
	f.mu.Lock()
	defer f.mu.Unlock()
	const keepSize = 1 // FALLOC_FL_KEEP_SIZE
	if mode&keepSize != 0 {
		return 0
	}
	if mode != 0 {
		return syscall.EOPNOTSUPP
	}
	if e := f.failing("write", n.o); e != 0 {
		return e
	}
	if end := int64(off + size); end > int64(len(n.o.data)) {
		n.o.truncate(end)
		n.o.pending = append(n.o.pending, change{off: end, trunc: true})
		f.changed("allocate", n.o)
	}
	return 0
}

func (n *node) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	n.f.mu.Lock()
	defer n.f.mu.Unlock()
	names := make([]string, 0, len(n.o.entries))
	for name := range n.o.entries {
		names = append(names, name)
	}
	sort.Strings(names)
	list := make([]fuse.DirEntry, 0, len(names))
	for _, name := range names {
		c := n.o.entries[name]
		mode := uint32(syscall.S_IFREG)
		if c.dir {
			mode = syscall.S_IFDIR
		}
		list = append(list, fuse.DirEntry{Name: name, Mode: mode, Ino: c.ino})
	}
	return gofs.NewListDirStream(list), 0
}

// link enters c in directory n under name (f.mu held).
func (n *node) link(name string, c *obj) {
	n.o.entries[name] = c
	c.parent, c.name = n.o, name
	c.nlink++
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	f := n.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if n.o.entries[name] != nil {
		return nil, syscall.EEXIST
	}
	c := f.newObj(true, mode)
	n.link(name, c)
	f.changed("mkdir", c)
	n.fill(c, &out.Attr)
	return n.child(ctx, c), 0
}

func (n *node) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	f := n.f
	f.mu.Lock()
	defer f.mu.Unlock()
	c := n.o.entries[name]
	switch {
	case c != nil && flags&syscall.O_EXCL != 0:
		return nil, nil, 0, syscall.EEXIST
	case c != nil && c.dir:
		return nil, nil, 0, syscall.EISDIR
	case c == nil:
		c = f.newObj(false, mode)
		n.link(name, c)
		f.changed("create", c)
	}
	n.fill(c, &out.Attr)
	return n.child(ctx, c), nil, fuse.FOPEN_KEEP_CACHE, 0
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	return n.remove(name, false)
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	return n.remove(name, true)
}

// remove takes name out of this directory: a file for unlink (dir false),
// an empty directory for rmdir (dir true).
func (n *node) remove(name string, dir bool) syscall.Errno {
	f := n.f
	f.mu.Lock()
	defer f.mu.Unlock()
	c := n.o.entries[name]
	switch {
	case c == nil:
		return syscall.ENOENT
	case c.dir && !dir:
		return syscall.EISDIR
	case !c.dir && dir:
		return syscall.ENOTDIR
	case dir && len(c.entries) > 0:
		return syscall.ENOTEMPTY
	}
	if dir {
		f.changed("rmdir", c)
	} else {
		f.changed("unlink", c)
	}
	delete(n.o.entries, name)
	c.nlink--
	return 0
}

func (n *node) Rename(ctx context.Context, name string, newParent gofs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	f := n.f
	f.mu.Lock()
	defer f.mu.Unlock()
	np, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	const noReplace = 1 // RENAME_NOREPLACE
	if flags&^noReplace != 0 {
		return syscall.EINVAL
	}
	src := n.o.entries[name]
	if src == nil {
		return syscall.ENOENT
	}
	dst := np.o.entries[newName]
	if dst == src {
		return 0
	}
	if dst != nil {
		switch {
		case flags&noReplace != 0:
			return syscall.EEXIST
		case dst.dir && !src.dir:
			return syscall.EISDIR
		case !dst.dir && src.dir:
			return syscall.ENOTDIR
		case dst.dir && len(dst.entries) > 0:
			return syscall.ENOTEMPTY
		}
		dst.nlink--
	}
	delete(n.o.entries, name)
	src.nlink--
	np.link(newName, src)
	f.changed("rename", src)
	return 0
}

func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	out.Bsize, out.Frsize, out.NameLen = 4096, 4096, 255
	out.Blocks, out.Bfree, out.Bavail = 1<<24, 1<<23, 1<<23
	out.Files, out.Ffree = 1<<20, 1<<19
	return 0
}
