package ledgercli

import (
	"strings"

	"github.com/stateguard/stateguard/impl/ledger"
)

// A --db that begins with one of libpq's URI prefixes selects the
// PostgreSQL engine; any other text is a file path (a file whose relative
// name begins so is written ./postgres://...).
var serverURLPrefixes = []string{"postgres://", "postgresql://"}

// isServerURL reports whether db selects the PostgreSQL engine.
func isServerURL(db string) bool {
	for _, p := range serverURLPrefixes {
		if strings.HasPrefix(db, p) {
			return true
		}
	}
	return false
}

// errURLPassword refuses a password given in the command line's URL: it
// would sit in ps output and in shell history. The password file, a
// service file or PGPASSWORD carry it instead.
var errURLPassword = explained(ledger.ErrInvalidInput, "database URL holds a password")

// urlHoldsPassword reports whether a postgres:// URL carries a secret the
// way libpq reads one: a userinfo with a password field (text before the
// first '@' that precedes any '/', holding a ':'), or a password or
// sslpassword query parameter (keys percent-decoded and trimmed of spaces,
// as libpq decodes them). It errs towards refusing: "user:@host" counts.
func urlHoldsPassword(db string) bool {
	rest := db
	for _, p := range serverURLPrefixes {
		if after, ok := strings.CutPrefix(db, p); ok {
			rest = after
			break
		}
	}
	if i := strings.IndexAny(rest, "@/"); i >= 0 && rest[i] == '@' {
		if strings.Contains(rest[:i], ":") {
			return true
		}
		rest = rest[i+1:]
	}
	_, query, found := strings.Cut(rest, "?")
	if !found {
		return false
	}
	for _, pair := range strings.Split(query, "&") {
		key, _, _ := strings.Cut(pair, "=")
		switch strings.Trim(percentDecode(key), " ") {
		case "password", "sslpassword":
			return true
		}
	}
	return false
}

// percentDecode decodes %XX escapes; a malformed escape is kept as it is
// (the driver refuses such a URL later, as not valid).
func percentDecode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
