package ledger

// The reference tool's own form of spans: float seconds of any finite,
// non-negative size. The Duration fields stop short of 293 years; the
// command line reads a timeout of 1e16 s or a grace of 1e300 s and must
// decide and store exactly what it read. These setters are that form, for
// the command line and for any caller that holds seconds as the reference
// writes them; they take the place of the Duration fields.

// SetTimeoutSeconds gives the task a timeout of exactly seconds, in place
// of Timeout; create refuses a negative, NaN or infinite one with
// ErrInvalidInput, as the command line's --timeout-seconds.
func (p *CreateParams) SetTimeoutSeconds(seconds float64) {
	p.timeoutSeconds = &seconds
}

// SetGraceSeconds judges with these two graces in float seconds, in place
// of ActiveGrace and DeliveryGrace (zero means zero); a negative, NaN or
// infinite one is ErrInvalidInput.
func (o *ReconcileOptions) SetGraceSeconds(active, delivery float64) {
	o.seconds = &graceSeconds{active, delivery}
}

// SetGraceSeconds judges with these two graces in float seconds, as
// ReconcileOptions.SetGraceSeconds.
func (o *MetricsOptions) SetGraceSeconds(active, delivery float64) {
	o.seconds = &graceSeconds{active, delivery}
}

// The reference's form of instants: float Unix seconds, of any finite
// size and detail. A Time holds whole nanoseconds within ±2^62 s; the
// command line's clock and cutoffs are floats it read and must store and
// compare exactly. These setters take them in that form, in place of the
// Time fields.

// SetClockSeconds reads the time from clock, in Unix seconds, in place of
// Clock; the ledger stores each reading as it is. A reading that is not
// finite fails the operation as an internal error.
func (o *Options) SetClockSeconds(clock func() float64) {
	o.clockSeconds = clock
}

// SetUpdatedBeforeSeconds selects the tasks updated before seconds (Unix
// seconds), in place of UpdatedBefore; a value that is not finite is
// ErrInvalidInput.
func (f *ListFilter) SetUpdatedBeforeSeconds(seconds float64) {
	f.updatedBeforeSeconds = &seconds
}

// SetEndedBeforeSeconds selects the tasks that ended before seconds (Unix
// seconds), in place of EndedBefore; a value that is not finite is
// ErrInvalidInput.
func (f *ListFilter) SetEndedBeforeSeconds(seconds float64) {
	f.endedBeforeSeconds = &seconds
}

// SetEndedBeforeSeconds prunes the trees that ended before seconds (Unix
// seconds), in place of EndedBefore; a value that is not finite is
// ErrInvalidInput.
func (o *PruneOptions) SetEndedBeforeSeconds(seconds float64) {
	o.endedBeforeSeconds = &seconds
}
