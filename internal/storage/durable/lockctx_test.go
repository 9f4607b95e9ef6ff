//go:build unix || windows

package durable

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// A context that ends while the attempt that takes the lock runs leaves
// AcquireContext holding nothing: it answers the context's error, and
// another descriptor takes the lock at once. The attempt hook ends the
// context right after the lock was taken, so no timing is involved.
func TestAcquireContextEndedDuringTheAttemptHoldsNothing(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state.yml.lock")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	attempts := 0
	lockAttempted = func() { attempts++; cancel() }
	defer func() { lockAttempted = nil }()
	l, err := AcquireContext(ctx, p)
	if attempts != 1 {
		t.Fatalf("%d attempts, want 1: the test did not end the context during the attempt", attempts)
	}
	if l != nil {
		l.Unlock()
		t.Fatal("AcquireContext returned a held lock although its context ended")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	other, err := openLock(p)
	if err != nil {
		t.Fatal(err)
	}
	defer other.close()
	if held, err := other.tryLock(); err != nil || !held {
		t.Fatalf("the lock is still held after the call gave up: held=%v err=%v", held, err)
	}
}

// With a context that stays live, AcquireContext waits for a holder on
// another descriptor and takes the lock once it is let go: the attempt
// hook lets it go after the first, refused attempt.
func TestAcquireContextTakesTheLockOnceFree(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state.yml.lock")
	holder, err := Acquire(p)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	attempts := 0
	lockAttempted = func() {
		attempts++
		if attempts == 1 {
			if err := holder.Unlock(); err != nil {
				t.Error(err)
			}
		}
	}
	defer func() { lockAttempted = nil }()
	l, err := AcquireContext(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	if attempts != 2 {
		t.Fatalf("%d attempts, want 2 (refused while held, then taken)", attempts)
	}
}
