package ledger_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/prop"

	"github.com/stateguard/stateguard/impl/ledger"
)

// doctorOf opens path read-only and returns its doctor's report.
func doctorOf(path string) (ledger.DoctorReport, error) {
	l, err := ledger.Open(path, ledger.Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err != nil {
		return ledger.DoctorReport{}, err
	}
	defer l.Close()
	return l.Doctor()
}

// TestRestoreLaws: over two reachable ledgers (build's programs), a backup
// of the first restored over the second
//
//   - reports what the backup reported (the same counts and size);
//   - leaves a ledger whose doctor's report equals the backup's, field for
//     field, and whose counts are the report's;
//   - keeps the second ledger aside, where its doctor reports as before.
//
// Seeded by -props.seed, sized by -props.n (a quarter of it); a failure
// prints the programs.
func TestRestoreLaws(t *testing.T) {
	params := propertyParams()
	// A case builds two ledgers and runs four doctors: a quarter of the
	// cases of the other laws keeps it as long as they take.
	params.MinSuccessfulTests = max(*propsN/4, 10)
	props := gopter.NewProperties(params)
	props.Property("restore then doctor equals the backup", prop.ForAll(
		func(progA, progB []int) string {
			where := func() string { return programString(progA) + " over " + programString(progB) }
			a, err := build(filepath.Join(t.TempDir()), progA)
			if err != nil {
				return "build: " + err.Error()
			}
			b, err := build(filepath.Join(t.TempDir()), progB)
			if err != nil {
				return "build: " + err.Error()
			}
			src, err := a.open(true)
			if err != nil {
				return err.Error()
			}
			backup := filepath.Join(t.TempDir(), "copy.sqlite")
			backedUp, err := src.Backup(backup)
			src.Close()
			if err != nil {
				return "backup: " + err.Error() + " of " + where()
			}
			wantDoctor, err := doctorOf(backup)
			if err != nil {
				return err.Error()
			}
			oldDoctor, err := doctorOf(b.path)
			if err != nil {
				return err.Error()
			}
			restored, err := ledger.Restore(b.path, backup, ledger.Options{AllowExternalACL: onWindows})
			if err != nil {
				return "restore: " + err.Error() + " of " + where()
			}
			if restored != backedUp {
				return fmt.Sprintf("restore reported %+v, the backup %+v, in %s", restored, backedUp, where())
			}
			got, err := doctorOf(b.path)
			if err != nil || !reflect.DeepEqual(got, wantDoctor) || got.TaskCount != restored.TaskCount || got.EventCount != restored.EventCount {
				return fmt.Sprintf("doctor after restore %+v (%v), of the backup %+v, in %s", got, err, wantDoctor, where())
			}
			aside, err := doctorOf(b.path + ledger.SetAsideSuffix)
			if err != nil || !reflect.DeepEqual(aside, oldDoctor) {
				return fmt.Sprintf("the ledger set aside reads %+v (%v), it read %+v, in %s", aside, err, oldDoctor, where())
			}
			return ""
		},
		genProgram, genProgram,
	))
	props.TestingRun(t)
}
