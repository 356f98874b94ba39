package auth

import (
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"unicode"
)

// Sentinel errors of the people and matters tokens are given to.
var (
	// ErrInvalidPerson reports a token request without a plausible person:
	// no name, a name that is not one line of text, or an e-mail address
	// that is not one.
	ErrInvalidPerson = errors.New("invalid person")
	// ErrMatterRequired reports a viewer or reviewer token that names no
	// matter: it would see none.
	ErrMatterRequired = errors.New("a viewer or reviewer token must name its matters")
)

// maxNameLen bounds a person's name and e-mail address, in bytes.
const maxNameLen = 200

// CheckMatter reports whether name is a matter name a legal hold can
// carry, and so one a token can be limited to: not blank, and text every
// store keeps (see ErrInvalidText). It is the one rule for matter names:
// policy checks a hold's matter with it. Errors wrap ErrInvalidMatter.
func CheckMatter(name string) error {
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("%w: empty", ErrInvalidMatter)
	}
	if !isText(name) {
		return fmt.Errorf("%w: %w", ErrInvalidMatter, ErrInvalidText)
	}
	return nil
}

// checkPerson checks the name and optional e-mail address of the person a
// token is for, trimmed.
func checkPerson(name, email string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: a token needs the name of the person it is for", ErrInvalidPerson)
	case !isText(name) || !isText(email):
		return fmt.Errorf("%w: name or e-mail: %w", ErrInvalidPerson, ErrInvalidText)
	case !isLine(name):
		return fmt.Errorf("%w: name %q: not one line (at most %d bytes, no control characters)", ErrInvalidPerson, name, maxNameLen)
	case email != "" && !plausibleEmail(email):
		return fmt.Errorf("%w: e-mail %q: not an address such as jane@example.com", ErrInvalidPerson, email)
	}
	return nil
}

// isLine reports whether s is text of at most maxNameLen bytes without
// control characters.
func isLine(s string) bool {
	return isText(s) && len(s) <= maxNameLen && !strings.ContainsFunc(s, unicode.IsControl)
}

// plausibleEmail reports whether s is a bare address (no display name, no
// angle brackets) whose domain has a dot.
func plausibleEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s || !isLine(s) {
		return false
	}
	_, domain, ok := strings.Cut(s, "@")
	return ok && strings.Contains(strings.Trim(domain, "."), ".")
}
