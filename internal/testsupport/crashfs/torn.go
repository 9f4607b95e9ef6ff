//go:build linux

package crashfs

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
)

// SectorSize is the unit in which a torn write persists in part.
const SectorSize = 512

// tornFile is a file reachable in the durable tree at the cut whose
// changes since its last sync were not synced.
type tornFile struct {
	path    string
	durable []byte
	pending []change
}

// tornSource is what a cut needs to build torn variants of its tree.
type tornSource struct{ files []tornFile }

// tornSource collects the files of the durable tree with unsynced changes
// (f.mu held), in path order.
func (f *FS) tornSource() *tornSource {
	ts := &tornSource{}
	seen := map[*obj]bool{}
	var walk func(prefix string, o *obj)
	walk = func(prefix string, o *obj) {
		if seen[o] {
			return
		}
		seen[o] = true
		for name, c := range o.durableEntries {
			p := prefix + name
			if c.dir {
				walk(p+"/", c)
			} else if len(c.pending) > 0 {
				ts.files = append(ts.files, tornFile{path: p, durable: append([]byte(nil), c.durable...), pending: append([]change(nil), c.pending...)})
			}
		}
	}
	walk("", f.root)
	sort.Slice(ts.files, func(i, j int) bool { return ts.files[i].path < ts.files[j].path })
	return ts
}

// TornFiles is how many files of the cut had unsynced changes that a torn
// cut may keep in part (0: every torn variant is the strict cut).
func (f *FS) TornFiles() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cutTorn == nil {
		return 0
	}
	return len(f.cutTorn.files)
}

// TornCut is the cut with, beyond the strict model, a part of each file's
// unsynced changes kept, drawn from seed (ALICE's exploration): for each
// such file either a prefix of its changes in order, the last one cut at
// a sector boundary, or any subset of the 512-byte sectors in which its
// current bytes differ from the synced ones. The same seed gives the same
// tree; the string says what was kept, for a failure message. Nil if the
// cut did not come.
func (f *FS) TornCut(seed uint64) (*Node, string) {
	f.mu.Lock()
	cut, ts := f.cut, f.cutTorn
	f.mu.Unlock()
	if cut == nil {
		return nil, ""
	}
	tree := cloneNode(cut)
	rng := rand.New(rand.NewPCG(seed, 0x7055))
	var what []string
	for _, tf := range ts.files {
		n := tree.Lookup(tf.path)
		if n == nil || n.Dir {
			continue
		}
		var desc string
		n.Data, desc = tf.torn(rng)
		what = append(what, tf.path+": "+desc)
	}
	return tree, strings.Join(what, "; ")
}

// torn draws one partial persistence of the file's unsynced changes.
func (tf tornFile) torn(rng *rand.Rand) ([]byte, string) {
	if rng.IntN(2) == 0 {
		// A prefix of the changes, the last one torn at a sector.
		k := rng.IntN(len(tf.pending) + 1)
		d := append([]byte(nil), tf.durable...)
		for _, c := range tf.pending[:k] {
			d = apply(d, c)
		}
		desc := fmt.Sprintf("%d of %d changes", k, len(tf.pending))
		if k < len(tf.pending) && !tf.pending[k].trunc && len(tf.pending[k].data) > SectorSize {
			c := tf.pending[k]
			cut := rng.IntN(len(c.data)/SectorSize) * SectorSize
			d = apply(d, change{off: c.off, data: c.data[:cut]})
			desc += fmt.Sprintf(" and %d of %d bytes of the next", cut, len(c.data))
		}
		return d, desc
	}
	// Any subset of the sectors that changed, over the final size or the
	// synced one.
	final := append([]byte(nil), tf.durable...)
	for _, c := range tf.pending {
		final = apply(final, c)
	}
	size := len(final)
	if rng.IntN(2) == 0 {
		size = len(tf.durable)
	}
	d := make([]byte, size)
	copy(d, tf.durable)
	kept, total := 0, 0
	for off := 0; off < size; off += SectorSize {
		end := min(off+SectorSize, size)
		var newer []byte
		if off < len(final) {
			newer = final[off:min(end, len(final))]
		}
		older := []byte(nil)
		if off < len(tf.durable) {
			older = tf.durable[off:min(end, len(tf.durable))]
		}
		if string(newer) == string(older) {
			continue
		}
		total++
		if rng.IntN(2) == 0 {
			kept++
			clear(d[off:end])
			copy(d[off:end], newer)
		}
	}
	return d, fmt.Sprintf("%d of %d changed sectors, size %d", kept, total, size)
}

func apply(d []byte, c change) []byte {
	if c.trunc {
		if c.off <= int64(len(d)) {
			return d[:c.off]
		}
		return append(d, make([]byte, c.off-int64(len(d)))...)
	}
	if end := c.off + int64(len(c.data)); end > int64(len(d)) {
		d = append(d, make([]byte, end-int64(len(d)))...)
	}
	copy(d[c.off:], c.data)
	return d
}

func cloneNode(n *Node) *Node {
	c := &Node{Dir: n.Dir, Mode: n.Mode, Data: append([]byte(nil), n.Data...)}
	if n.Dir {
		c.Entries = make(map[string]*Node, len(n.Entries))
		for name, e := range n.Entries {
			c.Entries[name] = cloneNode(e)
		}
	}
	return c
}
