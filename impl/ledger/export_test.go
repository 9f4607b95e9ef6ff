package ledger

// SetExaminePlan forces reconcile's plan for the external tests: "index",
// "scan", or "" to choose by the estimate.
func SetExaminePlan(l *Ledger, plan string) { l.examinePlan = plan }

// SetListPlan forces List's plan for the external tests: "index", "scan",
// or "" to choose by the count.
func SetListPlan(l *Ledger, plan string) { l.listPlan = plan }
