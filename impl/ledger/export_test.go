package ledger

// SetExaminePlan forces reconcile's plan for the external tests: "index",
// "scan", or "" to choose by the estimate.
func SetExaminePlan(l *Ledger, plan string) { l.plans.examine = plan }

// SetListPlan forces List's plan for the external tests: "index", "scan",
// or "" to choose by the count.
func SetListPlan(l *Ledger, plan string) { l.plans.list = plan }

// SetPruneBatch sets Prune's batch bounds for the external tests: at most
// roots candidate roots and (after the tree that reaches it) tasks tasks
// per batch; zero keeps the default.
func SetPruneBatch(l *Ledger, roots, tasks int) { l.plans.pruneBatch = [2]int{roots, tasks} }

// SetPruneWindow sets the bounds of a prune's plan for the external
// tests: at most tasks tasks, batches batches and bytes bytes of coded
// event sequences; zero keeps the default.
func SetPruneWindow(l *Ledger, tasks, batches, bytes int) {
	l.plans.pruneWindow = [3]int{tasks, batches, bytes}
}

// SetDoctorPage sets how many tasks a page of the server doctor reads,
// for the external tests; zero keeps the default.
func SetDoctorPage(l *Ledger, rows int) { l.plans.doctorPage = rows }
