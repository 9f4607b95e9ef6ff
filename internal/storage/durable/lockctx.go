package durable

import (
	"context"
	"time"
)

// AcquireContext is Acquire whose wait ends with ctx: when ctx is done
// before the lock is held it answers ctx's error and holds nothing. A
// context that can never end (Done is nil, as for context.Background)
// waits in the kernel exactly as Acquire does.
//
// The kernel offers no wait for a lock that a context can cut short, so
// the wait here retries a non-blocking attempt, first after 1 ms, then
// doubling up to pollCap. A waiter that polls can lose the lock to
// waiters queued in the kernel; it is never left holding it after ctx
// ended.
func AcquireContext(ctx context.Context, path string) (*Lock, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if ctx.Done() == nil {
		return Acquire(path)
	}
	h, err := openLock(path)
	if err != nil {
		return nil, err
	}
	delay := time.Millisecond
	for {
		held, err := h.tryLock()
		if lockAttempted != nil {
			lockAttempted()
		}
		if err != nil {
			h.close()
			return nil, err
		}
		if held {
			if err := ctx.Err(); err != nil {
				h.close() // ended while the last attempt ran: hold nothing
				return nil, err
			}
			return h, nil
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			h.close()
			return nil, ctx.Err()
		case <-t.C:
		}
		delay = min(2*delay, pollCap)
	}
}

// lockAttempted, when a test sets it, runs after each attempt of
// AcquireContext: a context it ends has ended while that attempt ran.
var lockAttempted func()

// pollCap bounds the pause between two attempts of AcquireContext.
const pollCap = 50 * time.Millisecond
