//go:build windows

package platformtest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestDeletedNamesUnopenable pins, outside the product, the fact the
// DeletedNamesUnopenable condition names: a file is held by one handle
// that shares deletion (as the ledger's storage checks hold sidecars for a
// moment), DeleteFile succeeds, and the name is opened again before the
// holder closes. Windows refuses that open (the file is pending deletion,
// or gone where deletion is POSIX-style); under Wine it succeeds. If Wine
// ever refuses it too, this test fails: drop the condition then.
func TestDeletedNamesUnopenable(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	name, err := syscall.UTF16PtrFromString(p)
	if err != nil {
		t.Fatal(err)
	}
	all := uint32(syscall.FILE_SHARE_READ | syscall.FILE_SHARE_WRITE | syscall.FILE_SHARE_DELETE)
	holder, err := syscall.CreateFile(name, syscall.GENERIC_READ, all, nil, syscall.OPEN_EXISTING, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.CloseHandle(holder)
	if err := syscall.DeleteFile(name); err != nil {
		t.Fatalf("DeleteFile beside a holder that shares deletion: %v", err)
	}
	again, err := syscall.CreateFile(name, syscall.GENERIC_READ, all, nil, syscall.OPEN_EXISTING, 0, 0)
	opened := err == nil
	if opened {
		syscall.CloseHandle(again)
	}
	if opened != underWine() {
		t.Fatalf("deleted name opened again: %v (%v); under Wine: %v", opened, err, underWine())
	}
}
