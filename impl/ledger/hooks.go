package ledger

// hooks gathers the seams through which this package's tests reach what
// a test machine cannot show or time cannot place: each field is nil
// outside tests, and production code calls it only when set.
var hooks struct {
	// pruneBatch runs in each applied batch of a prune: after the plan
	// found trees to remove ("read"), inside the write transaction after
	// the removals ("write"; an error rolls the batch back and ends the
	// prune, as a failure there would), and after the batch
	// ("committed"). An error ends the prune there.
	pruneBatch func(batch int, phase string) error
}
