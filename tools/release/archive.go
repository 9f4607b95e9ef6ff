package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// archiveTime is every archive member's modification time. Fixed, so that
// the time of the build never reaches the bytes; the DOS epoch, the
// earliest time a zip header can hold.
var archiveTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// member is one file of an archive, its content either in data or at path.
type member struct {
	name string
	mode os.FileMode
	data []byte
	path string
}

func (m member) content() ([]byte, error) {
	if m.path != "" {
		return os.ReadFile(m.path)
	}
	return m.data, nil
}

// releaseDocs are the documents every archive carries beside the binaries.
var releaseDocs = []string{"CHANGELOG.md", "LICENSE", "NOTICE", "README.md", "SECURITY.md"}

// archiveName is the archive of one target: zip for Windows, where it is
// the native format, gzip'ed tar elsewhere (it keeps the execute bits).
func archiveName(tg target, version string) string {
	base := fmt.Sprintf("stateguard_%s_%s_%s", version, tg.goos, tg.goarch)
	if tg.goos == "windows" {
		return base + ".zip"
	}
	return base + ".tar.gz"
}

// writeArchive writes the target's archive: one top directory named like
// the archive, holding both commands and releaseDocs, in name order.
func writeArchive(tg target, version, out, root string, bins map[string]string) (string, error) {
	name := archiveName(tg, version)
	top := fmt.Sprintf("stateguard_%s_%s_%s/", version, tg.goos, tg.goarch)
	var members []member
	for _, cli := range clis {
		members = append(members, member{name: top + tg.exe(cli), mode: 0o755, path: bins[cli]})
	}
	for _, doc := range releaseDocs {
		members = append(members, member{name: top + doc, mode: 0o644, path: filepath.Join(root, doc)})
	}
	sortMembers(members)
	var err error
	if tg.goos == "windows" {
		err = writeZip(filepath.Join(out, name), members)
	} else {
		err = writeTarGz(filepath.Join(out, name), members)
	}
	return name, err
}

func sortMembers(ms []member) {
	slices.SortFunc(ms, func(a, b member) int { return strings.Compare(a.name, b.name) })
}

// writeZip writes the members in the order given, each deflated, with
// archiveTime and its mode (Unix attributes, which pip and unzip honour for
// the execute bit). Go's zip writer adds nothing that varies between runs.
func writeZip(path string, members []member) error {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestCompression)
	})
	for _, m := range members {
		data, err := m.content()
		if err != nil {
			return err
		}
		hdr := &zip.FileHeader{Name: m.name, Method: zip.Deflate, Modified: archiveTime}
		hdr.SetMode(m.mode)
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// writeTarGz writes a ustar archive of the members in the order given,
// owned by uid and gid 0 with no owner names and archiveTime, compressed by
// gzip with an empty header (no name, no time).
func writeTarGz(path string, members []member) error {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, m := range members {
		data, err := m.content()
		if err != nil {
			return err
		}
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     m.name,
			Mode:     int64(m.mode.Perm()),
			Size:     int64(len(data)),
			ModTime:  archiveTime,
			Format:   tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
